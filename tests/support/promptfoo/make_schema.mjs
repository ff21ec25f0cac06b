// Writes config-schema.json: promptfoo's own zod schema of promptfooconfig.yaml (UnifiedConfigSchema) as JSON
// Schema, and the assertion types it knows (BaseAssertionTypesSchema), from the promptfoo npm package installed
// beside this script's working directory:
//   npm install promptfoo@0.121.20 && node make_schema.mjs > config-schema.json
// The tests validate `export --to promptfoo` against it where promptfoo itself is not installed.
import { BaseAssertionTypesSchema, UnifiedConfigSchema } from "promptfoo";
import { z } from "zod";

const config = z.toJSONSchema(UnifiedConfigSchema, { unrepresentable: "any", io: "input" });
const types = z.toJSONSchema(BaseAssertionTypesSchema, { unrepresentable: "any" });
process.stdout.write(JSON.stringify({ promptfoo: "0.121.20", config, assertionTypes: types.enum }) + "\n");
