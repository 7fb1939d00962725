// make_spec_choices: template configs then externs as candidates, and the reference.
#include <gtest/gtest.h>

#include <filesystem>

#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::specs_dir;

TEST(MakeSpecChoices, TemplateConfigsThenExterns) {
  Result<Spec> spec = load_spec(specs_dir() / "matmul.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  Result<SpecChoices> choices = make_spec_choices(*spec);
  ASSERT_TRUE(choices) << choices.error().message;
  ASSERT_TRUE(choices->kernel_template);
  const KernelTemplateDesc& desc = choices->kernel_template->desc();
  EXPECT_EQ(desc.name, "matmul");
  EXPECT_EQ(desc.entry, "matmul");
  EXPECT_FALSE(desc.mustache);
  EXPECT_EQ(desc.extra_flags, std::vector<std::string>{"-O2"});
  EXPECT_EQ(desc.signature.size(), 6u);
  EXPECT_NE(desc.source.find("void matmul("), std::string::npos);
  // TILE_M x TILE_N within 256: (8,16), (8,32), (16,16); times two orders; then openblas.
  ASSERT_EQ(choices->candidates.size(), 7u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(choices->candidates[i]->kind(), Choice::Kind::kTemplate);
  }
  EXPECT_EQ(choices->candidates[0]->name(), "matmul_TILE_M8_TILE_N16_ORDERijk");
  EXPECT_EQ(choices->candidates[6]->kind(), Choice::Kind::kExtern);
  EXPECT_EQ(choices->candidates[6]->name(), "openblas");
  ASSERT_TRUE(choices->reference);
  EXPECT_EQ(choices->reference->kind(), Choice::Kind::kExtern);
  EXPECT_EQ(choices->reference->name(), "reference:openblas");
}

TEST(MakeSpecChoices, ReferenceKernel) {
  Result<Spec> spec = load_spec(specs_dir() / "matmul_kernel_ref.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  Result<SpecChoices> choices = make_spec_choices(*spec);
  ASSERT_TRUE(choices) << choices.error().message;
  EXPECT_TRUE(choices->kernel_template->desc().mustache);
  EXPECT_EQ(choices->candidates.size(), 4u);  // 2 x 2 x 1, no externs
  ASSERT_TRUE(choices->reference);
  EXPECT_EQ(choices->reference->kind(), Choice::Kind::kTemplate);
  EXPECT_EQ(choices->reference->name(), "matmul_reference");
  EXPECT_EQ(choices->reference->info(), "");
}

TEST(MakeSpecChoices, NoReference) {
  Result<Spec> spec = load_spec(specs_dir() / "add.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  Result<SpecChoices> choices = make_spec_choices(*spec);
  ASSERT_TRUE(choices) << choices.error().message;
  ASSERT_EQ(choices->candidates.size(), 1u);  // an empty space has one config
  EXPECT_EQ(choices->candidates[0]->name(), "add");
  EXPECT_FALSE(choices->reference);
}

TEST(MakeSpecChoices, KernelSourceGoneAfterLoad) {
  Result<Spec> spec = load_spec(specs_dir() / "add.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  spec->kernel.source = specs_dir() / "vanished.cpp";
  Result<SpecChoices> choices = make_spec_choices(*spec);
  ASSERT_FALSE(choices);
  EXPECT_NE(choices.error().message.find("vanished.cpp"), std::string::npos)
      << choices.error().message;
}

}  // namespace
}  // namespace ktune
