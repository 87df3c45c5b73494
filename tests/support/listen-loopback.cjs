// Preloaded (`node -r`) into servers started by the tests whose port is all they let
// us choose (server-everything binds every interface): listen on 127.0.0.1 only.
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, ...rest) {
  if (typeof port !== "number" && typeof port !== "string") return listen.call(this, port, ...rest);
  return listen.call(this, Number(port), "127.0.0.1", ...rest.filter((a) => typeof a === "function"));
};
