// Puts kMeasurementEnvironment (measurement_env.h, which says why) into ktune's own process
// before any thread runtime starts.
#pragma once

namespace ktune {

// Sets every variable of kMeasurementEnvironment (measurement_env.h) that the user has not set
// and re-executes the program with the same arguments, because libgomp may already have read the
// environment before main (Debian's libmuparser links it). Returns normally when nothing needed
// doing or when the re-exec failed (measurements then run in the inherited environment). Call
// first thing in main.
void ensure_benchmark_environment(char** argv);

}  // namespace ktune
