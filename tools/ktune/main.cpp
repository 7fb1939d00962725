// ktune: the command-line tool. Subcommands live in cmd_<verb>.cpp.
#include <fmt/format.h>

#include <exception>

#include "cli.h"
#include "core/file_util.h"
#include "interrupt.h"
#include "ktune/bench/bench_env.h"
#include "select/resume.h"

namespace {

int run(int argc, char** argv) {
  using namespace ktune::cli;
  ktune::ensure_benchmark_environment(argv);
  CLI::App app{
      "ktune finds the fastest correct implementation of a compute kernel for a problem on this "
      "machine, and remembers it."};
  app.set_version_flag("--version", std::string("ktune ") + KTUNE_VERSION);
  app.require_subcommand(1);
  app.fallthrough();

  CliContext ctx;
  ctx.cache_dir = ktune::default_cache_dir();
  app.add_option("--cache-dir", ctx.cache_dir,
                 "Folder of the code and tuning caches (default: $KTUNE_CACHE_DIR, else "
                 "~/.cache/ktune)");
  app.add_option("--cache", ctx.cache_url,
                 "Tuning cache shared through a Redis server: redis://[[USER]:PASSWORD@]HOST[:PORT]"
                 "[/DB] (port 6379, database 0 by default; default: $KTUNE_CACHE_URL, else the "
                 "SQLite file in --cache-dir). Unreachable, or failing later: one warning, then "
                 "the local SQLite cache. The code cache stays in --cache-dir")
      ->envname("KTUNE_CACHE_URL")
      ->check(CLI::Validator(check_cache_url, "URL", "cache URL"));
  app.add_flag("--allow-shared-cache-dir", ctx.allow_shared_cache_dir,
               "Use a cache folder that other users can write (or that another user owns), with "
               "a warning; refused by default, since they could change the picks and kernels "
               "ktune serves");

  add_tune_command(app, ctx);
  add_space_command(app, ctx);
  add_cache_command(app, ctx);
  add_compile_command(app, ctx);
  add_gemm_command(app, ctx);
  add_opencl_command(app, ctx);
  add_simulate_command(app, ctx);
  add_report_command(app, ctx);

  install_interrupt_handler();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (ktune::interrupted()) return finish_interrupted(ctx);
  return ctx.exit_code;
}

}  // namespace

// Every error is reported as data (Status, exit codes); an exception that still escapes is a bug,
// said in one line rather than std::terminate's abort.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: ktune: internal error: {}\n", e.what());
  } catch (...) {
    fmt::print(stderr, "error: ktune: internal error: unknown exception\n");
  }
  return ktune::cli::kExitError;
}
