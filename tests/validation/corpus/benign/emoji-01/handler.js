const REACTIONS = {
  love: "❤️",
  family: "👨‍👩‍👧",
  party: "🎉",
  flag: "🏳️‍🌈",
};

exports.handler = async (event) => ({ reaction: REACTIONS[event.kind] || "👍" });
