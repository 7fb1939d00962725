// `--devices` (and Python's `devices=`): the devices one tuning measures on at once, as the
// DeviceSlots of SelectorOptions::devices (one worker each; select/ spreads the candidates).
//
//   CUDA    "all": every GPU this process sees; "0,2": those ordinals (as CUDA numbers them
//           here, under ktune's own CUDA_VISIBLE_DEVICES). Every GPU must have the backend's
//           device fingerprint (name, compute capability, SMs, driver): the picks are keyed by it.
//   OpenCL  "all": every device of the backend's platform with the backend's fingerprint; "0,2":
//           those device indices of that platform, each with that fingerprint.
//   CPU     "all": one device, every core ktune may run on (as without --devices); "0-3,4-7":
//           one device per item, a core or a range of cores, disjoint, of equal size, each
//           within the cores ktune may run on: its worker is pinned to them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ktune/core/device.h"
#include "ktune/core/status.h"
#include "ktune/worker/worker_options.h"

namespace ktune {

class Backend;

// The items of a --devices list: "all", or comma-separated integers and ranges "a-b" (a <= b).
// kInvalidArgument naming the bad item.
struct DeviceList {
  bool all = false;
  std::vector<std::vector<int>> items;  // each item's numbers, a range expanded
};
[[nodiscard]] Result<DeviceList> parse_device_list(std::string_view text);

// CPU devices from `list`: each item a device pinned to its cores, which must lie in `allowed`
// (the cores ktune may run on) and not repeat; "all": one slot of every allowed core.
[[nodiscard]] Result<std::vector<DeviceSlot>> cpu_device_slots(const DeviceList& list,
                                                               const std::vector<int>& allowed);

// CUDA devices from `list` for `count` GPUs: single ordinals below `count`, not repeated; each
// slot's CUDA_VISIBLE_DEVICES from cuda_visible_device() (so that ktune's own
// CUDA_VISIBLE_DEVICES is honoured).
[[nodiscard]] Result<std::vector<DeviceSlot>> cuda_device_slots(const DeviceList& list, int count);

// What a worker's CUDA_VISIBLE_DEVICES must say for it to see GPU `ordinal` of this process:
// the ordinal-th entry of ktune's own CUDA_VISIBLE_DEVICES when that is set, else the ordinal.
[[nodiscard]] std::string cuda_visible_device(int ordinal);

// The device that a --devices list names first (the one the backend compiles for and whose
// worker decides), or `fallback` for "all", an empty list or one that does not parse (which
// device_slots reports).
[[nodiscard]] int first_listed_device(std::string_view devices, int fallback);

// What can be checked of `text` before a backend is opened: that it parses and, for `kind`
// CUDA, that its ordinals exist (so that `--devices 3` on a one-GPU machine says so, rather than
// failing to open GPU 3).
[[nodiscard]] Status precheck_devices(std::string_view text, DeviceKind kind);

// The slots of `text` for `backend`'s device kind, checked against the machine (GPU count and
// fingerprint, OpenCL devices of the platform, the cores ktune may run on). An empty `text`:
// no slots (one device, as before).
[[nodiscard]] Result<std::vector<DeviceSlot>> device_slots(std::string_view text,
                                                           const Backend& backend);

}  // namespace ktune
