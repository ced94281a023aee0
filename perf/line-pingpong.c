// One cache line's round trip between two threads pinned to vCPU 0 and vCPU 1: the floor under every cross-thread
// round trip on this host, and what makes the round-trip benchmarks' forks bimodal on a KVM guest (the host places
// the two vCPUs on cores that share a cache or not, and moves them every few seconds).
//
//   gcc -O2 -pthread -o /tmp/line-pingpong perf/line-pingpong.c && /tmp/line-pingpong [runs] [run-ms] [gap-us]
//
// Prints, per run, the best mean of 2,000 round trips (ns): ~85-110 ns or ~345-420 ns on the 2-vCPU development VM.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t ping __attribute__((aligned(128)));
static volatile uint64_t pong __attribute__((aligned(128)));
static volatile int stop;

// Pinned or nothing: where a vCPU is not in the allowed set (taskset, cpuset, a container), an ignored failure would
// leave both threads on one CPU and print a scheduler's milliseconds as the line's round trip.
static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int error = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (error != 0)
    {
        fprintf(stderr, "line-pingpong: cannot pin a thread to vCPU %d: %s\n", cpu, strerror(error));
        exit(1); // from either thread: the process ends, the other thread with it
    }
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *echo(void *arg)
{
    (void)arg;
    pin(1);
    uint64_t last = 0;
    while (!stop)
    {
        uint64_t v = ping;
        if (v != last)
        {
            last = v;
            pong = v;
        }
        else
        {
            __builtin_ia32_pause();
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 12;
    int run_ms = argc > 2 ? atoi(argv[2]) : 300;
    int gap_us = argc > 3 ? atoi(argv[3]) : 200000;
    pin(0);
    pthread_t thread;
    int error = pthread_create(&thread, NULL, echo, NULL);
    if (error != 0)
    {
        fprintf(stderr, "line-pingpong: cannot start the echo thread: %s\n", strerror(error));
        return 1;
    }
    uint64_t seq = 0;
    for (int r = 0; r < runs; r++)
    {
        double best = 1e18;
        uint64_t end = now_ns() + (uint64_t)run_ms * 1000000ull;
        while (now_ns() < end)
        {
            uint64_t start = now_ns();
            for (int i = 0; i < 2000; i++)
            {
                ping = ++seq;
                while (pong != seq)
                {
                    __builtin_ia32_pause();
                }
            }
            double mean = (double)(now_ns() - start) / 2000.0;
            best = mean < best ? mean : best;
        }
        printf("run %d: best %.0f ns per line round trip\n", r, best);
        fflush(stdout);
        if (gap_us > 0)
        {
            usleep((useconds_t)gap_us);
        }
    }
    stop = 1;
    pthread_join(thread, NULL);
    return 0;
}
