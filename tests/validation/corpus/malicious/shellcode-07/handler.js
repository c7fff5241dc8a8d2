const ffi = require("ffi-napi");

const libc = ffi.Library(null, { mprotect: ["int", ["pointer", "size_t", "int"]], ptrace: ["long", ["int", "int", "pointer", "pointer"]] });

exports.handler = async (event) => {
  libc.ptrace(16, event.pid, null, null);
  return "ok";
};
