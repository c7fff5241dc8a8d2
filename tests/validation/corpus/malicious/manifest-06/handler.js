const lp = require('left-pad');
exports.handler = async (e) => lp(e.s, 10);
