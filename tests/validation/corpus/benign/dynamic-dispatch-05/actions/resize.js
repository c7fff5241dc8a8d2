exports.run = (a) => ({ w: Math.round((a.w || 100) / 2), h: Math.round((a.h || 100) / 2) });
