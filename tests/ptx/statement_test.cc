// The operand model: how slots, names and constraints render.
#include "ptxgen/ptx/statement.h"

#include "gtest/gtest.h"

namespace ptxgen::ptx {
namespace {

Statement AddStatement() {
  Statement statement("add");
  const SlotId sum = statement.AddSlot("sum", RegType::kB32, Access::kWrite);
  const SlotId x = statement.AddSlot("x", RegType::kB32, Access::kRead);
  statement.Emit("add.u32", {Plain(Reg(sum)), Plain(Reg(x)), Plain(Imm(7))});
  return statement;
}

TEST(StatementTest, InlineAsmNumbersOutputsThenInputsThenImmediates) {
  absl::StatusOr<std::string> text =
      RenderInlineAsm(AddStatement(), {{"sum", {"s"}}, {"x", {"a + 1"}}});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text,
            "asm volatile(\n"
            "    \"add.u32 %0, %1, %2;\\n\"\n"
            "    : \"=r\"(s)\n"
            "    : \"r\"(a + 1), \"n\"(7));");
}

TEST(StatementTest, PtxUsesRegisterNamesAndLiteralImmediates) {
  absl::StatusOr<std::string> text =
      RenderPtx(AddStatement(), {{"sum", {"%r1"}}, {"x", {"%r2"}}});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "add.u32 %r1, %r2, 7;");
}

TEST(StatementTest, OneNameForSeveralRegistersNamesAnArray) {
  Statement statement("vector");
  const SlotId v = statement.AddSlot("v", RegType::kF32, Access::kReadWrite, 3);
  statement.Emit("op", {Vector(Regs(v, 3))});
  EXPECT_EQ(*RenderPtx(statement, {{"v", {"%f"}}}), "op {%f0, %f1, %f2};");
  EXPECT_EQ(*RenderInlineAsm(statement, {{"v", {"acc"}}}),
            "asm volatile(\n"
            "    \"op {%0, %1, %2};\\n\"\n"
            "    : \"+f\"(acc[0]), \"+f\"(acc[1]), \"+f\"(acc[2]));");
  EXPECT_EQ(*RenderPtx(statement, {{"v", {"%a", "%b", "%c"}}}),
            "op {%a, %b, %c};");
}

TEST(StatementTest, InlineAsmConvertsPredicatesInsideAScope) {
  Statement statement("predicates");
  const SlotId in = statement.AddSlot("flag", RegType::kPred, Access::kRead);
  const SlotId out = statement.AddSlot("done", RegType::kPred, Access::kWrite);
  statement.Emit("and.pred", {Plain(Reg(out)), Plain(Reg(in)), Plain(Reg(in))});
  EXPECT_EQ(*RenderInlineAsm(statement, {{"flag", {"f"}}, {"done", {"d"}}}),
            "asm volatile(\n"
            "    \"{\\n\"\n"
            "    \".reg .pred p_done;\\n\"\n"
            "    \".reg .pred p_flag;\\n\"\n"
            "    \"setp.ne.b32 p_flag, %1, 0;\\n\"\n"
            "    \"and.pred p_done, p_flag, p_flag;\\n\"\n"
            "    \"selp.u32 %0, 1, 0, p_done;\\n\"\n"
            "    \"}\\n\"\n"
            "    : \"=r\"(d)\n"
            "    : \"r\"(f));");
  EXPECT_EQ(*RenderPtx(statement, {{"flag", {"%p1"}}, {"done", {"%p2"}}}),
            "and.pred %p2, %p1, %p1;");
}

TEST(StatementTest, LocalsAndLabelsGetAScopeInBothRenderings) {
  Statement statement("loop");
  statement.DeclareLocal("ready", RegType::kPred);
  statement.EmitLabel("AGAIN");
  statement.EmitGuarded(Text("ready"), "bra", {Plain(Text("AGAIN"))});
  EXPECT_EQ(*RenderPtx(statement, {}),
            "{\n.reg .pred ready;\nAGAIN:\n@ready bra AGAIN;\n}");
}

TEST(StatementTest, TextOperandsEscapePercentInInlineAsm) {
  Statement statement("special register");
  const SlotId rank = statement.AddSlot("rank", RegType::kB32, Access::kWrite);
  statement.Emit("mov.u32",
                 {Plain(Reg(rank)), Plain(Text("%cluster_ctarank"))});
  EXPECT_EQ(*RenderInlineAsm(statement, {{"rank", {"r"}}}),
            "asm volatile(\n"
            "    \"mov.u32 %0, %%cluster_ctarank;\\n\"\n"
            "    : \"=r\"(r));");
  EXPECT_EQ(*RenderPtx(statement, {{"rank", {"%r9"}}}),
            "mov.u32 %r9, %cluster_ctarank;");
}

TEST(StatementTest, MemoryClobberAndOperandlessForm) {
  Statement statement("fence");
  statement.set_touches_memory(true);
  statement.Emit("fence.proxy.async.shared::cta", {});
  EXPECT_EQ(
      *RenderInlineAsm(statement, {}),
      "asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");");
}

TEST(StatementTest, LongLinesWrapBetweenOperandsAndStayOneInstruction) {
  Statement statement("wide");
  const SlotId v =
      statement.AddSlot("v", RegType::kF32, Access::kReadWrite, 40);
  statement.Emit("op", {Vector(Regs(v, 40))});
  absl::StatusOr<std::string> text = RenderInlineAsm(statement, {{"v", {"a"}}});
  ASSERT_TRUE(text.ok());
  // Only the last piece of the instruction carries the newline.
  EXPECT_EQ(text->find("\\n"), text->rfind("\\n"));
  EXPECT_NE(text->find("%39};\\n\""), std::string::npos);
}

TEST(StatementTest, NamingErrorsSayWhichOperand) {
  const Statement statement = AddStatement();
  EXPECT_EQ(RenderPtx(statement, {{"sum", {"%r1"}}}).status().message(),
            "add: no name given for operand 'x'");
  EXPECT_EQ(
      RenderPtx(statement, {{"sum", {"%r1"}}, {"x", {"%r2"}}, {"y", {"%r3"}}})
          .status()
          .message(),
      "add: it has no operand named 'y'");
  Statement vector("vector");
  vector.AddSlot("v", RegType::kB32, Access::kRead, 3);
  EXPECT_EQ(RenderPtx(vector, {{"v", {"%a", "%b"}}}).status().message(),
            "vector: operand 'v' holds 3 registers but 2 names were given");
}

TEST(StatementTest, EmptyOperandListsAreRefusedNotRendered) {
  Statement negative("negative");
  const SlotId v = negative.AddSlot("v", RegType::kB32, Access::kRead, -1);
  negative.Emit("op", {Vector(Regs(v, -1))});
  EXPECT_EQ(
      RenderPtx(negative, {{"v", {"%a"}}}).status().message(),
      "negative: operand 'v' holds -1 registers; an operand holds 1 or more");

  Statement empty("empty");
  empty.Emit("op", {Vector(Regs(SlotId{0}, 0))});
  EXPECT_EQ(RenderInlineAsm(empty, {}).status().message(),
            "empty: an argument lists no operands");
  Statement no_base("no base");
  no_base.Emit("op", {Argument{Argument::Form::kTensorAddress, {}}});
  EXPECT_EQ(RenderPtx(no_base, {}).status().message(),
            "no base: an argument lists no operands");
}

}  // namespace
}  // namespace ptxgen::ptx
