#include "ptxgen/ptx/statement.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace ptxgen::ptx {

Operand Reg(SlotId slot, int element) {
  Operand operand;
  operand.kind = Operand::Kind::kRegister;
  operand.slot = slot;
  operand.element = element;
  return operand;
}

std::vector<Operand> Regs(SlotId slot, int count) {
  std::vector<Operand> operands;
  for (int i = 0; i < count; ++i) operands.push_back(Reg(slot, i));
  return operands;
}

Operand Imm(int64_t value) {
  Operand operand;
  operand.kind = Operand::Kind::kImmediate;
  operand.value = value;
  return operand;
}

Operand Text(std::string text) {
  Operand operand;
  operand.kind = Operand::Kind::kText;
  operand.text = std::move(text);
  return operand;
}

Argument Plain(Operand operand) {
  return {Argument::Form::kPlain, {std::move(operand)}};
}

Argument Vector(std::vector<Operand> operands) {
  return {Argument::Form::kVector, std::move(operands)};
}

Argument Address(Operand base) {
  return {Argument::Form::kAddress, {std::move(base)}};
}

Argument TensorAddress(Operand base, std::vector<Operand> coordinates) {
  Argument argument{Argument::Form::kTensorAddress, {std::move(base)}};
  for (Operand& c : coordinates) argument.operands.push_back(std::move(c));
  return argument;
}

Argument Pair(Operand first, Operand second) {
  return {Argument::Form::kPair, {std::move(first), std::move(second)}};
}

Statement::Statement(std::string description)
    : description_(std::move(description)) {}

SlotId Statement::AddSlot(std::string role, RegType type, Access access,
                          int count) {
  slots_.push_back(Slot{std::move(role), type, access, count});
  return SlotId{static_cast<int>(slots_.size()) - 1};
}

void Statement::DeclareLocal(std::string name, RegType type) {
  locals_.push_back(LocalRegister{std::move(name), type});
}

void Statement::Emit(std::string opcode, std::vector<Argument> arguments) {
  lines_.push_back(Instruction{std::move(opcode), std::move(arguments)});
}

void Statement::EmitGuarded(Operand guard, std::string opcode,
                            std::vector<Argument> arguments) {
  lines_.push_back(Instruction{std::move(opcode), std::move(arguments),
                               /*guarded=*/true, std::move(guard)});
}

void Statement::EmitLabel(std::string name) {
  lines_.push_back(Label{std::move(name)});
}

const Slot* Statement::FindSlot(const std::string& role) const {
  for (const Slot& slot : slots_) {
    if (slot.role == role) return &slot;
  }
  return nullptr;
}

const char* PtxRegTypeName(RegType type) {
  switch (type) {
    case RegType::kB16:
      return "b16";
    case RegType::kB32:
      return "b32";
    case RegType::kB64:
      return "b64";
    case RegType::kF32:
      return "f32";
    case RegType::kPred:
      return "pred";
    case RegType::kS32:
      return "s32";
  }
  return "b32";
}

namespace {

enum class Mode { kInlineAsm, kPtx };

const char* ConstraintLetter(RegType type) {
  switch (type) {
    case RegType::kB16:
      return "h";
    case RegType::kB64:
      return "l";
    case RegType::kF32:
      return "f";
    case RegType::kB32:
    case RegType::kS32:
    case RegType::kPred:  // Passed as a b32 value, converted in the asm.
      return "r";
  }
  return "r";
}

bool IsOutput(Access access) { return access != Access::kRead; }

// Everything a render pass needs to print operands.
struct Resolved {
  // What each slot's registers look like inside the instruction text.
  std::vector<std::vector<std::string>> slot_text;
  std::vector<std::string> scope_declarations;  // predicate conversions
  std::vector<std::string> prologue;
  std::vector<std::string> epilogue;
  std::vector<std::string> outputs;  // inline asm: "+f"(acc[0])
  std::vector<std::string> inputs;   // inline asm: "l"(desc)
  int next_number = 0;               // inline asm: next %N
};

absl::StatusOr<std::vector<std::string>> NamesFor(const Statement& statement,
                                                  const Slot& slot,
                                                  const OperandNames& names,
                                                  Mode mode) {
  if (slot.count < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        statement.description(), ": operand '", slot.role, "' holds ",
        slot.count, " registers; an operand holds 1 or more"));
  }
  auto it = names.find(slot.role);
  if (it == names.end() || it->second.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(statement.description(), ": no name given for operand '",
                     slot.role, "'"));
  }
  const std::vector<std::string>& given = it->second;
  if (static_cast<int>(given.size()) == slot.count) return given;
  if (given.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        statement.description(), ": operand '", slot.role, "' holds ",
        slot.count, " registers but ", given.size(), " names were given"));
  }
  std::vector<std::string> expanded;
  for (int i = 0; i < slot.count; ++i) {
    expanded.push_back(mode == Mode::kInlineAsm
                           ? absl::StrCat(given[0], "[", i, "]")
                           : absl::StrCat(given[0], i));
  }
  return expanded;
}

absl::Status CheckNamesKnown(const Statement& statement,
                             const OperandNames& names) {
  for (const auto& [role, unused] : names) {
    if (statement.FindSlot(role) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          statement.description(), ": it has no operand named '", role, "'"));
    }
  }
  return absl::OkStatus();
}

std::string PredicateName(const Slot& slot, int element) {
  return slot.count == 1 ? absl::StrCat("p_", slot.role)
                         : absl::StrCat("p_", slot.role, "_", element);
}

// Inline asm numbers outputs first, then inputs, then immediates.
absl::Status ResolveInlineAsm(const Statement& statement,
                              const OperandNames& names, Resolved& resolved) {
  resolved.slot_text.resize(statement.slots().size());
  for (bool outputs : {true, false}) {
    for (size_t s = 0; s < statement.slots().size(); ++s) {
      const Slot& slot = statement.slots()[s];
      if (IsOutput(slot.access) != outputs) continue;
      if (slot.type == RegType::kPred && slot.access == Access::kReadWrite) {
        return absl::InternalError(
            absl::StrCat(statement.description(), ": predicate operand '",
                         slot.role, "' cannot be both read and written"));
      }
      absl::StatusOr<std::vector<std::string>> exprs =
          NamesFor(statement, slot, names, Mode::kInlineAsm);
      if (!exprs.ok()) return exprs.status();
      const char* prefix = slot.access == Access::kRead    ? ""
                           : slot.access == Access::kWrite ? "="
                                                           : "+";
      for (int i = 0; i < slot.count; ++i) {
        const std::string number = absl::StrCat("%", resolved.next_number++);
        (outputs ? resolved.outputs : resolved.inputs)
            .push_back(absl::StrCat("\"", prefix, ConstraintLetter(slot.type),
                                    "\"(", (*exprs)[i], ")"));
        if (slot.type != RegType::kPred) {
          resolved.slot_text[s].push_back(number);
          continue;
        }
        const std::string pred = PredicateName(slot, i);
        resolved.slot_text[s].push_back(pred);
        resolved.scope_declarations.push_back(
            absl::StrCat(".reg .pred ", pred, ";"));
        if (outputs) {
          resolved.epilogue.push_back(
              absl::StrCat("selp.u32 ", number, ", 1, 0, ", pred, ";"));
        } else {
          resolved.prologue.push_back(
              absl::StrCat("setp.ne.b32 ", pred, ", ", number, ", 0;"));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ResolvePtx(const Statement& statement, const OperandNames& names,
                        Resolved& resolved) {
  for (const Slot& slot : statement.slots()) {
    absl::StatusOr<std::vector<std::string>> regs =
        NamesFor(statement, slot, names, Mode::kPtx);
    if (!regs.ok()) return regs.status();
    resolved.slot_text.push_back(*std::move(regs));
  }
  return absl::OkStatus();
}

class LinePrinter {
 public:
  LinePrinter(const Statement& statement, Mode mode, Resolved& resolved)
      : statement_(statement), mode_(mode), resolved_(resolved) {}

  absl::StatusOr<std::string> Print(
      const std::variant<Instruction, Label>& line) {
    if (const Label* label = std::get_if<Label>(&line)) {
      return absl::StrCat(label->name, ":");
    }
    const Instruction& instruction = std::get<Instruction>(line);
    std::string text;
    if (instruction.guarded) {
      absl::StatusOr<std::string> guard = Print(instruction.guard);
      if (!guard.ok()) return guard.status();
      absl::StrAppend(&text, "@", *guard, " ");
    }
    absl::StrAppend(&text, instruction.opcode);
    for (size_t i = 0; i < instruction.arguments.size(); ++i) {
      absl::StatusOr<std::string> argument = Print(instruction.arguments[i]);
      if (!argument.ok()) return argument.status();
      absl::StrAppend(&text, i == 0 ? " " : ", ", *argument);
    }
    absl::StrAppend(&text, ";");
    return text;
  }

 private:
  absl::StatusOr<std::string> Print(const Operand& operand) {
    switch (operand.kind) {
      case Operand::Kind::kRegister: {
        const int s = operand.slot.index;
        if (s < 0 || s >= static_cast<int>(resolved_.slot_text.size()) ||
            operand.element < 0 ||
            operand.element >=
                static_cast<int>(resolved_.slot_text[s].size())) {
          return absl::InternalError(absl::StrCat(
              statement_.description(), ": operand refers to a register ",
              "outside its slot"));
        }
        return resolved_.slot_text[s][operand.element];
      }
      case Operand::Kind::kImmediate:
        if (mode_ == Mode::kPtx) return absl::StrCat(operand.value);
        resolved_.inputs.push_back(absl::StrCat("\"n\"(", operand.value, ")"));
        return absl::StrCat("%", resolved_.next_number++);
      case Operand::Kind::kText:
        if (mode_ == Mode::kPtx) return operand.text;
        return absl::StrReplaceAll(operand.text, {{"%", "%%"}});
    }
    return absl::InternalError("unknown operand kind");
  }

  absl::StatusOr<std::string> Print(const Argument& argument) {
    if (argument.operands.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          statement_.description(), ": an argument lists no operands"));
    }
    std::vector<std::string> parts;
    for (const Operand& operand : argument.operands) {
      absl::StatusOr<std::string> part = Print(operand);
      if (!part.ok()) return part.status();
      parts.push_back(*std::move(part));
    }
    switch (argument.form) {
      case Argument::Form::kPlain:
        return absl::StrJoin(parts, ", ");
      case Argument::Form::kVector:
        return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
      case Argument::Form::kAddress:
        return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
      case Argument::Form::kTensorAddress: {
        const std::string base = parts.front();
        parts.erase(parts.begin());
        return absl::StrCat("[", base, ", {", absl::StrJoin(parts, ", "), "}]");
      }
      case Argument::Form::kPair:
        return absl::StrJoin(parts, "|");
    }
    return absl::InternalError("unknown argument form");
  }

  const Statement& statement_;
  Mode mode_;
  Resolved& resolved_;
};

// The statement's PTX lines, in a { } scope when it declares anything.
absl::StatusOr<std::vector<std::string>> PtxLines(const Statement& statement,
                                                  Mode mode,
                                                  Resolved& resolved) {
  LinePrinter printer(statement, mode, resolved);
  std::vector<std::string> body;
  bool has_label = false;
  for (const auto& line : statement.lines()) {
    has_label = has_label || std::holds_alternative<Label>(line);
    absl::StatusOr<std::string> text = printer.Print(line);
    if (!text.ok()) return text.status();
    body.push_back(*std::move(text));
  }
  const bool scoped = has_label || !statement.locals().empty() ||
                      !resolved.scope_declarations.empty();
  std::vector<std::string> lines;
  if (scoped) lines.push_back("{");
  for (const LocalRegister& local : statement.locals()) {
    lines.push_back(absl::StrCat(".reg .", PtxRegTypeName(local.type), " ",
                                 local.name, ";"));
  }
  for (auto* part : {&resolved.scope_declarations, &resolved.prologue, &body,
                     &resolved.epilogue}) {
    lines.insert(lines.end(), part->begin(), part->end());
  }
  if (scoped) lines.push_back("}");
  return lines;
}

// Splits a long line after ", " so each C string literal stays readable.
std::vector<std::string> WrapAtCommas(const std::string& line, size_t width) {
  std::vector<std::string> pieces;
  size_t start = 0;
  while (line.size() - start > width) {
    size_t cut = line.rfind(", ", start + width);
    if (cut == std::string::npos || cut <= start) {
      cut = line.find(", ", start + width);
      if (cut == std::string::npos) break;
    }
    pieces.push_back(line.substr(start, cut + 2 - start));
    start = cut + 2;
  }
  pieces.push_back(line.substr(start));
  return pieces;
}

std::string ConstraintList(const std::vector<std::string>& items) {
  std::string text;
  size_t column = 6;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (i > 0) {
      if (column + 1 + item.size() > 80) {
        absl::StrAppend(&text, "\n      ");
        column = 6;
      } else {
        absl::StrAppend(&text, " ");
        ++column;
      }
    }
    absl::StrAppend(&text, item);
    column += item.size();
  }
  return text;
}

}  // namespace

absl::StatusOr<std::string> RenderInlineAsm(const Statement& statement,
                                            const OperandNames& expressions) {
  if (absl::Status known = CheckNamesKnown(statement, expressions);
      !known.ok()) {
    return known;
  }
  Resolved resolved;
  if (absl::Status status = ResolveInlineAsm(statement, expressions, resolved);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<std::vector<std::string>> lines =
      PtxLines(statement, Mode::kInlineAsm, resolved);
  if (!lines.ok()) return lines.status();

  std::vector<std::string> literals;
  if (lines->empty()) literals.push_back("\"\"");  // An operand-only pin.
  for (const std::string& line : *lines) {
    std::vector<std::string> pieces = WrapAtCommas(line, 72);
    pieces.back() += "\\n";
    for (const std::string& piece : pieces) {
      literals.push_back(absl::StrCat("\"", piece, "\""));
    }
  }
  const bool has_operands =
      !resolved.outputs.empty() || !resolved.inputs.empty();
  const char* clobber = statement.touches_memory() ? "\"memory\"" : "";
  if (!has_operands && literals.size() == 1) {
    return statement.touches_memory()
               ? absl::StrCat("asm volatile(", literals[0], " ::: ", clobber,
                              ");")
               : absl::StrCat("asm volatile(", literals[0], ");");
  }
  std::string text = "asm volatile(";
  for (const std::string& literal : literals) {
    absl::StrAppend(&text, "\n    ", literal);
  }
  const int sections = statement.touches_memory()  ? 3
                       : !resolved.inputs.empty()  ? 2
                       : !resolved.outputs.empty() ? 1
                                                   : 0;
  const std::vector<std::string>* lists[] = {&resolved.outputs,
                                             &resolved.inputs};
  for (int section = 0; section < sections; ++section) {
    absl::StrAppend(&text, "\n    :");
    if (section < 2 && !lists[section]->empty()) {
      absl::StrAppend(&text, " ", ConstraintList(*lists[section]));
    } else if (section == 2) {
      absl::StrAppend(&text, " ", clobber);
    }
  }
  absl::StrAppend(&text, ");");
  return text;
}

absl::StatusOr<std::string> RenderPtx(const Statement& statement,
                                      const OperandNames& registers) {
  if (absl::Status known = CheckNamesKnown(statement, registers); !known.ok()) {
    return known;
  }
  Resolved resolved;
  if (absl::Status status = ResolvePtx(statement, registers, resolved);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<std::vector<std::string>> lines =
      PtxLines(statement, Mode::kPtx, resolved);
  if (!lines.ok()) return lines.status();
  return absl::StrJoin(*lines, "\n");
}

}  // namespace ptxgen::ptx
