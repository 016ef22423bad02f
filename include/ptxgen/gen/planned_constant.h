#ifndef PTXGEN_GEN_PLANNED_CONSTANT_H_
#define PTXGEN_GEN_PLANNED_CONSTANT_H_

// What every kernel family's generated kernel declares of its plan.

#include <string>

namespace ptxgen::gen {

// One number the host planned, as the generated kernel declares it:
// `constexpr <type> plan::<name> = <value>;`.
struct PlannedConstant {
  std::string type;
  std::string name;
  std::string value;
};

}  // namespace ptxgen::gen

#endif  // PTXGEN_GEN_PLANNED_CONSTANT_H_
