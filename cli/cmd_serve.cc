// kestrel serve [--port 8765] [--bind 127.0.0.1] [--token T]: a live page
// over the database while runs write to it (serve/live_server.h). Runs until
// SIGINT or SIGTERM.

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/cli.h"
#include "serve/live_server.h"

namespace kestrel::cli {
namespace {

struct ServeFlags {
  int port = 8765;
  std::string bind = "127.0.0.1";
  std::string token;
};

}  // namespace

void AddServeCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* serve = app.add_subcommand("serve", "a live page over the database (loopback unless a token is given)");
  serve->add_option("--port", flags->port, "the TCP port (default 8765; 0: any free port)")->check(CLI::Range(0, 65535));
  serve->add_option("--bind", flags->bind, "the address to listen on (default 127.0.0.1; others need a token)");
  serve->add_option("--token", flags->token,
                    "the token every write must carry (default $KESTREL_TOKEN); required to bind beyond loopback");
  serve->callback([flags, &cli] {
    serve::ServeOptions options;
    options.db = cli.db;
    options.bind = flags->bind;
    options.port = flags->port;
    options.token = flags->token;
    if (const char* env = std::getenv("KESTREL_TOKEN"); options.token.empty() && env != nullptr) options.token = env;
    if (auto allowed = serve::LiveServer::CheckAccess(options); !allowed) return (void)cli.Report(allowed.error());
    // The database must exist and be Kestrel's before anyone is told to look.
    if (auto store = cli.OpenForReading(); !store) return (void)cli.Report(store.error());
    // SIGINT and SIGTERM stop the server from a thread of their own.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    auto server = serve::LiveServer::Bind(options);
    if (!server) return (void)cli.Report(server.error());
    // An IPv6 address goes in brackets in a URL (RFC 3986).
    const bool v6 = options.bind.find(':') != std::string::npos;
    std::cerr << "kestrel: serving " << cli.db << " at http://" << (v6 ? "[" + options.bind + "]" : options.bind) << ":"
              << (*server)->Port() << "/"
              << (options.token.empty() ? " (read-only: no token)" : "") << std::endl;
    std::atomic<bool> signalled = false;
    std::thread stopper([&signals, &server, &signalled] {
      int signal = 0;
      sigwait(&signals, &signal);
      signalled = true;
      (*server)->Stop();
    });
    const Status served = (*server)->Serve();
    if (!signalled) pthread_kill(stopper.native_handle(), SIGTERM);  // it stopped by itself: release the waiter
    stopper.join();
    if (!served) return (void)cli.Report(served.error());
  });
}

}  // namespace kestrel::cli
