exports.handler = async () => 'ok';
