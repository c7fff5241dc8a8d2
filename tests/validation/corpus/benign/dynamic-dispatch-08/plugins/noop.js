module.exports = async () => null;
