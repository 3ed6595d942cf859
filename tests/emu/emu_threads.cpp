/* The thread scheduler (EMU_THREADS, the KBENCH_EMU_TSAN build; emu_scheduler.h): CUDA thread
 * t of every CTA is OS thread t of a pool that lives as long as the process (creating a
 * thread per CUDA thread at every launch took most of a ThreadSanitizer run).  The threads of
 * a launch run its CTAs one after another between two barriers of them all; __syncthreads is
 * a barrier of the CTA that a thread leaves when its kernel returns (as on the GPU, the
 * threads still running then meet without it).  ThreadSanitizer sees every hand-over through
 * these barriers and the pool's mutex, so a missing __syncthreads is a data race. */
#include <barrier>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "emu_scheduler.h"

namespace
{

struct job {
    dim3 grid, block;
    size_t smem;
    void (*body)(const void *);
    const void *arg;
    unsigned n;
};

/* Never destroyed: pool threads wait on them while the process exits. */
std::mutex &pool_mu = *new std::mutex;
std::condition_variable &pool_wake = *new std::condition_variable;
std::condition_variable &pool_done = *new std::condition_variable;
unsigned pool_size;          /* threads started */
unsigned long long pool_gen; /* launches handed out */
job pool_job;
unsigned pool_running; /* threads still in the current launch */

std::barrier<> *edge;        /* the launch's threads, around each CTA */
std::barrier<> *cta_barrier; /* the running CTA's __syncthreads */

/* Thread t's part of launch j: every CTA, thread 0 preparing each while the others wait. */
void run_launch(unsigned t, const job &j)
{
    emu_enter_thread(t);
    for (unsigned bz = 0; bz < j.grid.z; bz++)
        for (unsigned by = 0; by < j.grid.y; by++)
            for (unsigned bx = 0; bx < j.grid.x; bx++) {
                if (t == 0) {
                    emu_dyn_smem = emu_new_dyn_smem(j.smem);
                    cta_barrier = new std::barrier<>(j.n);
                }
                edge->arrive_and_wait();
                blockIdx = uint3{bx, by, bz};
                j.body(j.arg);
                cta_barrier->arrive_and_drop();
                edge->arrive_and_wait(); /* the CTA's statics and shared memory are free */
                if (t == 0) {
                    delete cta_barrier;
                    emu_free_dyn_smem(emu_dyn_smem);
                    emu_dyn_smem = nullptr;
                }
            }
}

/* Pool thread t: every launch with more than t threads. */
void pool_main(unsigned t)
{
    unsigned long long seen = 0;
    for (;;) {
        job j;
        {
            std::unique_lock<std::mutex> lock(pool_mu);
            pool_wake.wait(lock, [&] { return pool_gen != seen; });
            seen = pool_gen;
            if (t >= pool_job.n)
                continue;
            j = pool_job;
        }
        run_launch(t, j);
        std::lock_guard<std::mutex> lock(pool_mu);
        if (--pool_running == 0)
            pool_done.notify_one();
    }
}

} // namespace

void emu_syncthreads()
{
    cta_barrier->arrive_and_wait();
}

void emu_run(dim3 grid, dim3 block, size_t smem, void (*body)(const void *), const void *arg)
{
    const unsigned n = block.x * block.y * block.z;
    std::unique_lock<std::mutex> lock(pool_mu);
    for (; pool_size < n; pool_size++)
        std::thread(pool_main, pool_size).detach();
    gridDim = grid;
    blockDim = block;
    edge = new std::barrier<>(n);
    pool_job = job{grid, block, smem, body, arg, n};
    pool_running = n;
    pool_gen++;
    pool_wake.notify_all();
    pool_done.wait(lock, [] { return pool_running == 0; });
    delete edge;
    emu_count_launch(grid, block);
}
