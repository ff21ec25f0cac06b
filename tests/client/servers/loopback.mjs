// Preloaded with `node --import`: every TCP listen() binds 127.0.0.1 whatever host it asked for.
// The reference server binds all interfaces; tests here must only ever listen on loopback.
import net from "node:net";

const listen = net.Server.prototype.listen;
const isPort = (value) => typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value));

net.Server.prototype.listen = function (...args) {
  const [first] = args;
  if (first !== null && typeof first === "object" && !Array.isArray(first) && first.path === undefined) {
    args[0] = { ...first, host: "127.0.0.1" };
  } else if (isPort(first)) {
    if (typeof args[1] === "string") args[1] = "127.0.0.1";
    else args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
