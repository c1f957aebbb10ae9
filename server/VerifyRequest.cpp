// verify's options from JSON; see VerifyRequest.h.
#include "server/VerifyRequest.h"

#include <stdexcept>

namespace stitch::server {

using protocol::json;

VerifyCall verifyCallFrom(const json& body, const std::string& fields, VerifyCall call) {
  for (const auto& [key, value] : body.items()) {
    if (key == "reference" || key == "candidate" || key == "id") continue;
    if (key == "atol" || key == "rtol") {
      if (!value.is_number() || value.get<double>() < 0) throw std::invalid_argument("'" + key + "' must be a number >= 0");
      call.params[key] = value;
    } else if (key == "trials" || key == "seed") {
      if (!value.is_number_integer() || (key == "trials" && value.get<long long>() < 1))
        throw std::invalid_argument("'" + key + "' must be a " + (key == "trials" ? "positive " : "") + "whole number");
      call.params[key] = value;
    } else if (key == "allowPrecision") {
      if (!value.is_array()) throw std::invalid_argument("'allowPrecision' must be a list of tf32, fp16, bf16");
      for (const auto& p : value)
        if (p != "tf32" && p != "fp16" && p != "bf16")
          throw std::invalid_argument("'allowPrecision' takes tf32, fp16 or bf16, not " + p.dump());
      call.params[key] = value;
    } else if (key == "precision") {
      if (value != "eager" && value != "fp32") throw std::invalid_argument("'precision' takes eager or fp32, not " + value.dump());
      call.params[key] = value;
    } else if (key == "timing" || key == "kernelbench") {
      if (!value.is_boolean()) throw std::invalid_argument("'" + key + "' must be true or false");
      if (key == "timing") call.params[key] = value;
      else call.kernelbench = value.get<bool>();
    } else {
      throw std::invalid_argument("unknown field '" + key + "'; " + fields);
    }
  }
  return call;
}

}  // namespace stitch::server
