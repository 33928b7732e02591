/**
 * Strict checking of Kubernetes manifests against the API's own types, offline. kubernetes-models'
 * compiled validators (of the OpenAPI schemas) let unknown fields through, as the schemas do; the
 * API server's strict field validation refuses them. So each manifest is also written out as a
 * TypeScript object literal of its kind's interface (kubernetes-models' .d.ts, generated from the
 * same schemas) and compiled: TypeScript refuses a property the type lacks at any depth (excess
 * property checks), and a value of the wrong type.
 */
import { resolve } from 'node:path';
import ts from 'typescript';

/** The interface and module of each apiVersion/kind the folder may use. */
export const KUBERNETES_TYPES: Readonly<Record<string, readonly [module: string, type: string]>> = {
  'v1/ConfigMap': ['kubernetes-models/v1/ConfigMap', 'IConfigMap'],
  'v1/Secret': ['kubernetes-models/v1/Secret', 'ISecret'],
  'v1/Service': ['kubernetes-models/v1/Service', 'IService'],
  'apps/v1/Deployment': ['kubernetes-models/apps/v1/Deployment', 'IDeployment'],
  'batch/v1/Job': ['kubernetes-models/batch/v1/Job', 'IJob'],
  'policy/v1/PodDisruptionBudget': ['kubernetes-models/policy/v1/PodDisruptionBudget', 'IPodDisruptionBudget'],
  'networking.k8s.io/v1/NetworkPolicy': ['kubernetes-models/networking.k8s.io/v1/NetworkPolicy', 'INetworkPolicy'],
};

/** A manifest as parsed, with the place it came from (for messages). */
export interface NamedManifest {
  readonly where: string;
  readonly doc: { readonly apiVersion: string; readonly kind: string };
}

/** Compiles every manifest as its kind's type; one message per problem (empty: all are exact). */
export function typeProblems(manifests: readonly NamedManifest[]): string[] {
  const problems: string[] = [];
  const imports: string[] = [];
  const consts: string[] = [];
  manifests.forEach(({ where, doc }, i) => {
    const known = KUBERNETES_TYPES[`${doc.apiVersion}/${doc.kind}`];
    if (known === undefined) {
      problems.push(`${where}: no type for ${doc.apiVersion}/${doc.kind}`);
      return;
    }
    imports.push(`import type { ${known[1]} as T${i} } from '${known[0]}';`);
    consts.push(`// ${where}\nexport const m${i}: T${i} = ${JSON.stringify(doc, null, 2)};`);
  });
  const file = resolve('test/support/.kubernetes-manifests.generated.ts');
  const source = [...imports, ...consts].join('\n');
  const config = ts.getParsedCommandLineOfConfigFile(
    resolve('tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => problems.push(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    },
  );
  if (config === undefined) return problems;
  const host = ts.createCompilerHost({ ...config.options, noEmit: true });
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (name) => (resolve(name) === file ? source : readFile(name));
  host.fileExists = (name) => resolve(name) === file || fileExists(name);
  const program = ts.createProgram([file], { ...config.options, noEmit: true, types: [] }, host);
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (d.file === undefined || d.start === undefined) {
      problems.push(text);
      continue;
    }
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    const lines = source.split('\n');
    const owner = lines
      .slice(0, line + 1)
      .reverse()
      .find((l) => l.startsWith('// '));
    problems.push(`${owner?.slice(3) ?? d.file.fileName}: ${lines[line]?.trim() ?? ''}: ${text}`);
  }
  return problems;
}
