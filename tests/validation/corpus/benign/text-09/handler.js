const STOP = new Set(["the", "a", "an", "and", "or", "of", "to", "in", "is", "it"]);

exports.handler = async (event) => {
  const words = (event.text || "").toLowerCase().match(/[a-z']+/g) || [];
  const counts = {};
  for (const w of words) if (!STOP.has(w) && w.length > 2) counts[w] = (counts[w] || 0) + 1;
  const top = Object.entries(counts).sort((a, b) => b[1] - a[1]).slice(0, 10);
  return { words: words.length, top };
};
