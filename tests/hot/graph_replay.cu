/* A program apart from kbench that times the hot fixture's work (work.cuh)
 * by CUDA-graph replay: a graph of `batch` back-to-back runs, replayed
 * `reps` times, the median over replays divided by batch.  With --stream it
 * times the same batch launched on the stream, uncaptured, between two
 * events instead.  tests/test_hot_gpu.c holds kbench's hot mode to these.
 *
 *   graph_replay [--stream] axpy|sgemm|many|memcpy N [batch] [reps]
 *                                                   prints "us_per_run X" */
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

enum work { AXPY, SGEMM, MANY, MEMCPY };

struct job {
    enum work w;
    int n;
    size_t elems;
    float *x, *y, *z;
    cublasHandle_t blas;
};

/* One run of the work on stream s (cuBLAS is bound to it already). */
static cudaError_t one_run(const job &j, cudaStream_t s)
{
    switch (j.w) {
    case AXPY:
        return hot_axpy(s, j.n, j.x, j.y, j.z);
    case MANY:
        return hot_many(s, j.n, j.x, j.y, j.z);
    case MEMCPY:
        return hot_memcpy(s, j.elems, j.x, j.z);
    default:
        return hot_sgemm(j.blas, j.n, j.x, j.y, j.z) == CUBLAS_STATUS_SUCCESS ? cudaSuccess
                                                                              : cudaErrorUnknown;
    }
}

static int parse_work(const char *name, enum work *w)
{
    static const char *const names[] = {"axpy", "sgemm", "many", "memcpy"};
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0) {
            *w = (enum work)i;
            return 0;
        }
    return -1;
}

int main(int argc, char **argv)
{
    int stream_mode = argc > 1 && strcmp(argv[1], "--stream") == 0;
    argv += stream_mode;
    argc -= stream_mode;
    job j = {};
    if (argc < 3 || parse_work(argv[1], &j.w) != 0) {
        fprintf(stderr, "usage: graph_replay [--stream] axpy|sgemm|many|memcpy N [batch] [reps]\n");
        return 2;
    }
    j.n = atoi(argv[2]);
    int batch = argc > 3 ? atoi(argv[3]) : j.w == SGEMM ? 200 : j.w == AXPY ? 1000 : 10;
    int reps = argc > 4 ? atoi(argv[4]) : 30;
    j.elems = j.w == SGEMM ? (size_t)j.n * j.n : j.w == MANY ? (size_t)HOT_MANY_ELEMS : (size_t)j.n;
    std::vector<float> h(j.elems);
    void *ws = nullptr;
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t ge = nullptr;
    cudaEvent_t a, b;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&j.x, j.elems * sizeof(float)));
    CHECK(cudaMalloc(&j.y, j.elems * sizeof(float)));
    CHECK(cudaMalloc(&j.z, j.elems * sizeof(float)));
    hot_fill(h.data(), j.elems, 1);
    CHECK(cudaMemcpy(j.x, h.data(), j.elems * sizeof(float), cudaMemcpyHostToDevice));
    hot_fill(h.data(), j.elems, 2);
    CHECK(cudaMemcpy(j.y, h.data(), j.elems * sizeof(float), cudaMemcpyHostToDevice));
    if (j.w == SGEMM) {
        CHECK(cudaMalloc(&ws, HOT_CUBLAS_WORKSPACE));
        if (cublasCreate(&j.blas) != CUBLAS_STATUS_SUCCESS ||
            cublasSetWorkspace(j.blas, ws, HOT_CUBLAS_WORKSPACE) != CUBLAS_STATUS_SUCCESS ||
            cublasSetStream(j.blas, s) != CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "cuBLAS set-up failed\n");
            return 1;
        }
    }
    if (!stream_mode) {
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < batch; i++)
            CHECK(one_run(j, s));
        CHECK(cudaStreamEndCapture(s, &g));
        CHECK(cudaGraphInstantiate(&ge, g, 0));
    }
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int r = 0; r < reps + 3; r++) {
        float ms;
        CHECK(cudaEventRecord(a, s));
        if (stream_mode)
            for (int i = 0; i < batch; i++)
                CHECK(one_run(j, s));
        else
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
