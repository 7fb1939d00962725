// The test edits this file and expects a re-tune.
#pragma once
#define KTUNE_TEST_SCALE 1.0f
