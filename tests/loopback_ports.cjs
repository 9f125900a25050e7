// Preload for the conformance suite's mocks (`node --require`): they call listen(0) and read
// address().port at once, which only works when binding every interface. Here listen(0)
// takes the next port from LOOPBACK_PORTS and binds 127.0.0.1; address() answers at once.
// Lines "[loopback] assigned P" / "[loopback] listening P" on stdout let the test wait.
const net = require("net");
const ports = (process.env.LOOPBACK_PORTS || "").split(",").filter(Boolean).map(Number);
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (args[0] === 0 && typeof args[1] !== "string" && ports.length) {
    const port = ports.shift();
    const address = { address: "127.0.0.1", family: "IPv4", port };
    const real = this.address;
    this.address = function () { return real.call(this) || address; };
    process.stdout.write(`[loopback] assigned ${port}\n`);
    this.once("listening", () => process.stdout.write(`[loopback] listening ${port}\n`));
    return listen.call(this, port, "127.0.0.1", ...args.slice(1));
  }
  return listen.apply(this, args);
};
