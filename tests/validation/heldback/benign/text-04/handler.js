const counts = (s) => {
  const words = s.toLowerCase().match(/[\p{L}']+/gu) || [];
  const m = new Map();
  for (const w of words) m.set(w, (m.get(w) || 0) + 1);
  return [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
};
exports.handle = async (event) => ({ top: counts(String(event.body || "")) });
