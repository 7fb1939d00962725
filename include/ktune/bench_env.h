// The process environment that in-process CPU measurement needs, set before any thread runtime
// starts. Candidates that use different thread pools (a template's OpenMP, OpenBLAS's pthreads)
// otherwise steal cores from each other: an idle OpenMP pool spins after each call, and an
// OpenBLAS call measured right after an OpenMP template ran twice as slow on 2 cores.
#pragma once

namespace ktune {

// Sets every variable of kMeasurementEnvironment (measurement_env.h) that the user has not set
// and re-executes the program with the same arguments, because libgomp may already have read the
// environment before main (Debian's libmuparser links it). Returns normally when nothing needed
// doing or when the re-exec failed (measurements then run in the inherited environment). Call
// first thing in main.
void ensure_benchmark_environment(char** argv);

}  // namespace ktune
