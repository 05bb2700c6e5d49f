import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { parse } from 'yaml';
import { sidecarJsonSchema } from '../../core/skills/sidecar-schema';
import { bundledSkills, invalidFixtures, validFixtures } from './helpers';

const root = path.resolve(__dirname, '..', '..');
const sidecarsIn = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter((folder) => fs.existsSync(path.join(dir, folder, 'skillflow.yaml')))
    .map((folder) => ({
      folder,
      data: parse(fs.readFileSync(path.join(dir, folder, 'skillflow.yaml'), 'utf8')) as unknown,
    }));

/** docs/skillflow.schema.json is generated from the validator's own constants and agrees with it. */
describe('the JSON Schema of skillflow.yaml', () => {
  const schema = sidecarJsonSchema();
  const validate = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true }).compile(
    schema,
  );

  it('is what docs/skillflow.schema.json holds (regenerate with: npx skillflow skills schema > docs/skillflow.schema.json)', () => {
    expect(JSON.parse(fs.readFileSync(path.join(root, 'docs', 'skillflow.schema.json'), 'utf8'))).toEqual(schema);
  });

  it('accepts every sidecar the validator accepts', () => {
    for (const { folder, data } of [...sidecarsIn(bundledSkills), ...sidecarsIn(validFixtures)]) {
      expect({ folder, valid: validate(data), errors: validate.errors ?? null }).toEqual({
        folder,
        valid: true,
        errors: null,
      });
    }
  });

  it('rejects the shape errors the validator reports', () => {
    for (const folder of ['sidecar-unknown-key', 'sidecar-bad-ttl', 'sidecar-bad-type']) {
      const data = parse(fs.readFileSync(path.join(invalidFixtures, folder, 'skillflow.yaml'), 'utf8')) as unknown;
      expect({ folder, valid: validate(data) }).toEqual({ folder, valid: false });
    }
  });
});
