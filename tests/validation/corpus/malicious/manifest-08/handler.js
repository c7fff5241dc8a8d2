const x = require('lodash');
exports.handler = async () => x.VERSION;
