#ifndef PTXGEN_PTX_STATEMENT_H_
#define PTXGEN_PTX_STATEMENT_H_

// The operand model shared by every instruction family.
//
// A Statement is a short PTX sequence whose operands are typed, named slots
// ("d", "a_desc", "mbarrier", ...). The same Statement renders two ways:
//   - RenderInlineAsm: a CUDA C++ `asm volatile(...)` statement, slots bound to
//     C++ expressions, with constraints derived from the slot types;
//   - RenderPtx: bare PTX lines, slots bound to PTX register names.
// Instruction families build Statements; nobody glues operand lists by hand.

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace ptxgen::ptx {

// PTX register classes. Inline-asm constraints: b16 "h", b32 and s32 "r",
// b64 "l", f32 "f". s32 is a b32 register whose C++ side is a signed int
// (wgmma's s32 accumulators). Predicates have no constraint: inline asm
// passes them as b32 values and converts inside the statement's scope.
enum class RegType { kB16, kB32, kB64, kF32, kPred, kS32 };

// How a statement uses a slot of registers.
enum class Access { kRead, kWrite, kReadWrite };

// A named group of `count` registers that the statement reads and/or writes.
struct Slot {
  std::string role;
  RegType type;
  Access access;
  int count = 1;
};

// Identifies a slot of one Statement.
struct SlotId {
  int index = -1;
};

// A token in an instruction's operand list.
struct Operand {
  enum class Kind { kRegister, kImmediate, kText };
  Kind kind = Kind::kText;
  SlotId slot;        // kRegister
  int element = 0;    // kRegister: which register of the slot
  int64_t value = 0;  // kImmediate: a compile-time constant ("n" in inline asm)
  std::string text;   // kText: a local register, a label, "_" or a literal
};

// Register `element` of a slot.
Operand Reg(SlotId slot, int element = 0);
// Registers 0..count-1 of a slot; none for count <= 0 (which rendering
// refuses as an argument without operands).
std::vector<Operand> Regs(SlotId slot, int count);
Operand Imm(int64_t value);
Operand Text(std::string text);

// How operands are grouped in an instruction's argument list.
struct Argument {
  enum class Form {
    kPlain,          // a
    kVector,         // {a, b, c}
    kAddress,        // [a]
    kTensorAddress,  // [a, {b, c}]
    kPair,           // a|b
  };
  Form form = Form::kPlain;
  std::vector<Operand> operands;
};

// Arguments in each form: one operand, a {vector}, an [address], a
// [tensor map, {coordinates}], and a pair ("p|q").
Argument Plain(Operand operand);
Argument Vector(std::vector<Operand> operands);
Argument Address(Operand base);
Argument TensorAddress(Operand base, std::vector<Operand> coordinates);
Argument Pair(Operand first, Operand second);

// One PTX instruction: opcode and arguments, optionally under a guard.
struct Instruction {
  std::string opcode;
  std::vector<Argument> arguments;
  bool guarded = false;  // "@guard opcode ..."
  Operand guard;
};

// A branch target inside a statement.
struct Label {
  std::string name;
};

// A register declared inside a statement's asm block.
struct LocalRegister {
  std::string name;
  RegType type;
};

// A sequence of instructions over named register slots, rendered as one
// inline-asm block or as a device function.
class Statement {
 public:
  // `description` names the statement in generated comments and errors.
  explicit Statement(std::string description);

  SlotId AddSlot(std::string role, RegType type, Access access, int count = 1);
  // A register declared inside the statement's own { } scope.
  void DeclareLocal(std::string name, RegType type);
  void Emit(std::string opcode, std::vector<Argument> arguments);
  void EmitGuarded(Operand guard, std::string opcode,
                   std::vector<Argument> arguments);
  void EmitLabel(std::string name);
  // Statements that touch memory carry the "memory" clobber so the compiler
  // does not move loads and stores across them.
  void set_touches_memory(bool touches) { touches_memory_ = touches; }

  const std::string& description() const { return description_; }
  const std::vector<Slot>& slots() const { return slots_; }
  const std::vector<LocalRegister>& locals() const { return locals_; }
  const std::vector<std::variant<Instruction, Label>>& lines() const {
    return lines_;
  }
  bool touches_memory() const { return touches_memory_; }
  // The slot with this role, or nullptr.
  const Slot* FindSlot(const std::string& role) const;

 private:
  std::string description_;
  std::vector<Slot> slots_;
  std::vector<LocalRegister> locals_;
  std::vector<std::variant<Instruction, Label>> lines_;
  bool touches_memory_ = false;
};

// Names for a statement's slots, by role. A role bound to exactly one name
// while its slot holds several registers names an array: "acc" expands to
// acc[0], acc[1], ... in inline asm and to acc0, acc1, ... in PTX (so "%f"
// gives %f0, %f1, ...). Otherwise one name is needed per register.
using OperandNames = std::map<std::string, std::vector<std::string>>;

// Renders a complete `asm volatile(...);` statement (no trailing newline).
absl::StatusOr<std::string> RenderInlineAsm(const Statement& statement,
                                            const OperandNames& expressions);

// Renders the bare PTX lines (no trailing newline).
absl::StatusOr<std::string> RenderPtx(const Statement& statement,
                                      const OperandNames& registers);

// The PTX spelling of a register class in declarations: "b32", "pred", ...
const char* PtxRegTypeName(RegType type);

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_STATEMENT_H_
