// The test edits this file and expects a re-tune.
#pragma once
inline float helper_scale(float x) { return x; }
