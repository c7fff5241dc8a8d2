exports.run = (a) => { const xs = a.xs || [0]; return { mean: xs.reduce((s, x) => s + x, 0) / xs.length }; };
