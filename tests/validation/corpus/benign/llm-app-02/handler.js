const OpenAI = require("openai");

const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY });
const SYSTEM = "You are a helpful assistant. Classify the sentiment of the review as positive, neutral or negative.";
// phrases we refuse to forward, a cheap input filter
const BLOCKED = ["ignore previous instructions", "system prompt"];

exports.handler = async (event) => {
  const text = String(event.review || "").slice(0, 4000);
  if (BLOCKED.some((p) => text.toLowerCase().includes(p))) return { error: "rejected input" };
  const r = await client.chat.completions.create({
    model: process.env.MODEL || "gpt-4o-mini",
    messages: [{ role: "system", content: SYSTEM }, { role: "user", content: text }],
  });
  return { sentiment: r.choices[0].message.content.trim() };
};
