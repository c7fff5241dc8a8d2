const Diff = require("diff");

exports.handler = async (event) => {
  const patch = Diff.createTwoFilesPatch("before", "after", event.before || "", event.after || "");
  return { patch };
};
