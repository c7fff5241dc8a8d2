module.exports = { Anonymous: function () { this.start = () => {}; } };
