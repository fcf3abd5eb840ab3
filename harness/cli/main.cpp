/// fusebench: parse, dispatch. Each subcommand lives in its own file (harness/cli/<name>.cpp).
#include "harness/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"fusebench: verification and benchmarking harness for fused CUDA kernels"};
  app.require_subcommand(1);
  fb::cli::command_action run;
  fb::cli::add_list_command(app, run);
  fb::cli::add_verify_command(app, run);
  fb::cli::add_bench_command(app, run);
  fb::cli::add_report_command(app, run);
  fb::cli::add_compare_command(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : fb::cli::exit_usage;
  }
  return run();
}
