// Preload for the conformance suite (`node --require`): every server it starts listens on
// 127.0.0.1 only (its mocks listen on every interface otherwise).
// The mocks call listen(0) and read address().port at once, which only works when binding
// every interface: here listen(0) takes the next port from LOOPBACK_PORTS (comma-separated,
// chosen free by the caller), binds 127.0.0.1, and address() answers at once. With no port
// left, listen(0) still binds 127.0.0.1 (a mock reading address() at once then fails, loudly).
// Any other listen without a host (a port, or an options object) gets host 127.0.0.1.
// Lines "[loopback] assigned P" / "[loopback] listening P" on stdout let a caller wait.
const net = require("net");
const ports = (process.env.LOOPBACK_PORTS || "").split(",").filter(Boolean).map(Number);
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first === 0 && typeof args[1] !== "string" && ports.length) {
    const port = ports.shift();
    const address = { address: "127.0.0.1", family: "IPv4", port };
    const real = this.address;
    this.address = function () { return real.call(this) || address; };
    process.stdout.write(`[loopback] assigned ${port}\n`);
    this.once("listening", () => process.stdout.write(`[loopback] listening ${port}\n`));
    return listen.call(this, port, "127.0.0.1", ...args.slice(1));
  }
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  } else if (first === undefined || typeof first === "function") {
    args.unshift(0, "127.0.0.1");
  } else if (first && Object.getPrototypeOf(first) === Object.prototype && !first.host
             && first.path === undefined && first.fd === undefined && first.handle === undefined) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
