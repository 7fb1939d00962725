# The README's two commands. Both install the Debian packages they need (only the missing ones),
# configure and build.
#   make demo   tune examples/matmul_cpu on this CPU, with the SQLite tuning cache
#   make test   run the whole test suite through ctest
BUILD ?= build
JOBS ?= $(shell nproc)
BUILD_TYPE ?= Release
CMAKE_ARGS ?=
DEBIAN_PACKAGES = cmake g++ make pkg-config libfmt-dev nlohmann-json3-dev libyaml-cpp-dev \
  libcli11-dev libsqlite3-dev libssl-dev libkainjow-mustache-dev libmuparser-dev libopenblas-dev \
  libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev ocl-icd-opencl-dev pocl-opencl-icd \
  opencl-c-headers libopenmpi-dev openmpi-bin libhiredis-dev redis-server
# libhiredis-dev: the Redis tuning cache (optional in the build, KTUNE_REDIS); redis-server: its
# tests start their own on a loopback port (ktune itself never needs a local one).

# The Python package (pyproject.toml; CI's pytest step): Python's headers and venv to build the
# wheel in, and ccache, which makes the wheel's build of the libraries (a fresh CMake folder) a
# matter of cache hits after `make test` compiled them. scikit-build-core and nanobind come from
# PyPI, as the build requirements of pyproject.toml.
PYTHON_PACKAGES = python3 python3-dev python3-venv ccache

# Headless Chromium for the HTML report's render test (ctest report.chromium_render, label report;
# skipped without it, except under CI=true). About 90 MB to download and 330 MB installed, so not
# in DEBIAN_PACKAGES: `make report-deps` installs it, .ci/run does before `make test`.
REPORT_PACKAGES = chromium

# AFL++ for bench/fuzz.sh and CI's fuzzing (the replay tests need nothing more).
FUZZ_PACKAGES = afl++ gcc-12-plugin-dev

.PHONY: deps fuzz-deps python-deps report-deps configure build demo test clean

deps:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing $$missing"; \
	  sudo=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi

fuzz-deps:
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(FUZZ_PACKAGES)"

python-deps:
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(PYTHON_PACKAGES)"

report-deps:
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(REPORT_PACKAGES)"

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/bin/ktune tune examples/matmul_cpu/matmul.yaml

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
