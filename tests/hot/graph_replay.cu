/* A program apart from kbench that times the hot fixture's work by CUDA
 * graph replay: a graph of `batch` back-to-back runs, replayed `reps`
 * times, the median over replays divided by batch.  tests/test_hot_gpu.c
 * holds kbench's hot mode to within 5% of it.
 *
 *   graph_replay axpy|sgemm N [batch] [reps]    prints "us_per_run X"     */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "work.cuh"

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "axpy") != 0 && strcmp(argv[1], "sgemm") != 0)) {
        fprintf(stderr, "usage: %s axpy|sgemm N [batch] [reps]\n", argv[0]);
        return 2;
    }
    int sgemm = strcmp(argv[1], "sgemm") == 0, n = atoi(argv[2]);
    int batch = argc > 3 ? atoi(argv[3]) : (sgemm ? 200 : 1000);
    int reps = argc > 4 ? atoi(argv[4]) : 30;
    size_t elems = sgemm ? (size_t)n * n : (size_t)n;
    std::vector<float> h(elems);
    float *x, *y, *z;
    void *ws = nullptr;
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cudaEvent_t a, b;
    cublasHandle_t blas = nullptr;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&x, elems * sizeof(float)));
    CHECK(cudaMalloc(&y, elems * sizeof(float)));
    CHECK(cudaMalloc(&z, elems * sizeof(float)));
    hot_fill(h.data(), elems, 1);
    CHECK(cudaMemcpy(x, h.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
    hot_fill(h.data(), elems, 2);
    CHECK(cudaMemcpy(y, h.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
    if (sgemm) {
        CHECK(cudaMalloc(&ws, HOT_CUBLAS_WORKSPACE));
        if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS ||
            cublasSetWorkspace(blas, ws, HOT_CUBLAS_WORKSPACE) != CUBLAS_STATUS_SUCCESS ||
            cublasSetStream(blas, s) != CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "cuBLAS set-up failed\n");
            return 1;
        }
    }
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < batch; i++) {
        if (sgemm) {
            if (hot_sgemm(blas, n, x, y, z) != CUBLAS_STATUS_SUCCESS) {
                fprintf(stderr, "cublasSgemm failed in capture\n");
                return 1;
            }
        } else {
            CHECK(hot_axpy(s, n, x, y, z));
        }
    }
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int r = 0; r < reps + 3; r++) {
        float ms;
        CHECK(cudaEventRecord(a, s));
        CHECK(cudaGraphLaunch(ge, s));
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 3) /* the first replays upload and warm up */
            t.push_back(ms * 1e3 / batch);
    }
    std::sort(t.begin(), t.end());
    printf("us_per_run %.4f\n", t[t.size() / 2]);
    return 0;
}
