exports.handle = async () => "hi";
