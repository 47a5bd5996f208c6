// e2e (task.test.ts, case 4): the job user forges its own prolog.json, the payload changed and re-signed with a key of its own.
import { generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
const file = process.argv[2];
const env = JSON.parse(readFileSync(file, 'utf8'));
const payload = JSON.stringify({ ...JSON.parse(env.payload), memlockMin: 0, hcas: [] });
const signature = sign(null, Buffer.from(payload), generateKeyPairSync('ed25519').privateKey).toString('base64');
writeFileSync(file + '.forged', JSON.stringify({ ...env, payload, signature }));
renameSync(file + '.forged', file);
console.log('forged ' + file);

