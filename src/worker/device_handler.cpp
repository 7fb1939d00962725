// make_request_flow: a device's adapter with the worker protocol's reference-file reader.
#include "worker/device_handler.h"

#include "worker/worker_protocol.h"

namespace ktune {

std::unique_ptr<RequestFlow> make_request_flow(DeviceKind kind) {
  return std::make_unique<RequestFlow>(make_device(kind), &read_reference_file);
}

}  // namespace ktune
