module.exports = { unserialize: (x) => JSON.parse(x) };
