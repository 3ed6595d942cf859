/* `kbench run`: the parent process.  It never initialises CUDA: a probe
 * child reads the device, and worker children (one per plugin section,
 * replaced after any failure) run the cases.  Each case's record is written
 * and flushed as it ends, so an interrupted run keeps every finished case. */
#ifndef KBENCH_RUNNER_H
#define KBENCH_RUNNER_H

typedef struct kbi_run_args {
    const char *profile_path;
    const char *out_dir;     /* NULL: results/<profile>-<time> */
    const char *filter;      /* glob over case ids, NULL for all */
    const char *plugins_dir; /* --plugins */
    int device;              /* -1: the profile's */
    const char *devices;     /* --devices: "all" or a list "0,1,3" of CUDA ordinals, one
                                worker per device; NULL: one device (`device`) */
    int shard_index;         /* 1-based; 0 when not sharded */
    int shard_count;
    int in_process;          /* run cases in this process (for ncu and compute-sanitizer,
                                which wrap one process); no isolation */
    int list;                /* --list: print the selected cases' ids, run nothing */
    int profile_run;         /* cudaProfilerStart/Stop around one run of each case */
    const char *sanitize;    /* run device cases under compute-sanitizer with this tool
                                (memcheck, racecheck, initcheck, synccheck), or NULL */
    int argc;                /* the command line, for the env record */
    char **argv;
} kbi_run_args;

/* Runs the profile.  Returns the process exit code (0 ok, 1 a case failed,
 * 2 bad input or unwritable results, 130 interrupted). */
int kbi_run(const kbi_run_args *args);

/* Parses "I/N" with 1 <= I <= N; returns 0 on success. */
int kbi_parse_shard(const char *text, int *index, int *count);

#endif
