# workerd config of the worker consumer. The runner fills the @…@ values in a copy.
#
# Two things a partner needs to know:
# - workerd's default outbound network reaches public addresses only; the services here run on loopback, so the
#   worker's globalOutbound is a network service that also allows "private" and "local" addresses.
#   Against the real (public) services, the default is enough.
# - nodejs_compat puts text bindings into process.env, where the SDK reads its defaults
#   (TAP_API_KEY, TAP_BASE_URL, COLLECTIONS_API_KEY, COLLECTIONS_BASE_URL); without it, pass apiKey and baseUrl.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .partnerWorker),
    (name = "loopback-network", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "main")],
);

const partnerWorker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.bundle.mjs")],
  compatibilityDate = "2025-09-01",
  compatibilityFlags = ["nodejs_compat"],
  globalOutbound = "loopback-network",
  bindings = [
    (name = "FLOW_SETUP", text = @FLOW_SETUP@),
    (name = "TAP_API_KEY", text = @TAP_API_KEY@),
    (name = "TAP_BASE_URL", text = @TAP_BASE_URL@),
    (name = "COLLECTIONS_API_KEY", text = @COLLECTIONS_API_KEY@),
    (name = "COLLECTIONS_BASE_URL", text = @COLLECTIONS_BASE_URL@),
  ],
);
