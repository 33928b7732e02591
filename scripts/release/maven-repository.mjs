// The Java client as a Maven repository folder (groupId/artifactId/version/…), so Maven or Gradle
// can take the release folder as a file repository: the jar, its sources jar and its pom, each with
// the .sha1 and .md5 files Maven checks, and the artifact's maven-metadata.xml.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { must } from './run.mjs';

/**
 * The groupId, artifactId and version a pom.xml names for its project (not its parent or plugins).
 * @param {string} pom
 * @returns {{ groupId: string, artifactId: string, version: string }}
 */
export function pomCoordinates(pom) {
  // The project's own elements come before <dependencies> and <build>, which name others'.
  const head = pom.replace(/<!--[\s\S]*?-->/g, '').split(/<(?:dependencies|build|properties)>/)[0];
  const read = (tag) => {
    const match = new RegExp(`<${tag}>([^<]+)</${tag}>`).exec(head);
    if (match === null) throw new Error(`pom.xml names no ${tag}`);
    return match[1].trim();
  };
  return { groupId: read('groupId'), artifactId: read('artifactId'), version: read('version') };
}

/**
 * Writes `file` and its .sha1 and .md5 beside it.
 * @param {string} path
 * @param {Buffer | string} data
 */
function writeWithSums(path, data) {
  writeFileSync(path, data);
  for (const algorithm of ['sha1', 'md5'])
    writeFileSync(`${path}.${algorithm}`, createHash(algorithm).update(data).digest('hex'));
}

/**
 * Builds the Java client (clients/java/build.sh, JDK only) in `work` and lays out its jar, sources
 * jar and pom under `repoRoot`; returns the folder of the version.
 * @param {{ javaDir: string, work: string, repoRoot: string, version: string, time: Date }} options
 * @returns {string}
 */
export function mavenRepository({ javaDir, work, repoRoot, version, time }) {
  const pom = readFileSync(join(javaDir, 'pom.xml'), 'utf8');
  const coordinates = pomCoordinates(pom);
  if (coordinates.version !== version)
    throw new Error(`clients/java/pom.xml has version ${coordinates.version}, the release is ${version}: set it`);
  must('sh', [join(javaDir, 'build.sh'), '--skip-tests'], javaDir, { ...process.env, TICKETD_JAVA_BUILD_DIR: work });
  const { groupId, artifactId } = coordinates;
  const artifactDir = join(repoRoot, ...groupId.split('.'), artifactId);
  const dir = join(artifactDir, version);
  mkdirSync(dir, { recursive: true });
  const base = `${artifactId}-${version}`;
  writeWithSums(join(dir, `${base}.jar`), readFileSync(join(work, `${base}.jar`)));
  const sources = join(work, `${base}-sources.jar`);
  must('jar', ['--create', '--file', sources, '-C', join(javaDir, 'src', 'main', 'java'), '.'], javaDir);
  writeWithSums(join(dir, `${base}-sources.jar`), readFileSync(sources));
  writeWithSums(join(dir, `${base}.pom`), pom);
  const stamp = time.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  writeWithSums(
    join(artifactDir, 'maven-metadata.xml'),
    `<?xml version="1.0" encoding="UTF-8"?>
<metadata>
  <groupId>${groupId}</groupId>
  <artifactId>${artifactId}</artifactId>
  <versioning>
    <latest>${version}</latest>
    <release>${version}</release>
    <versions>
      <version>${version}</version>
    </versions>
    <lastUpdated>${stamp}</lastUpdated>
  </versioning>
</metadata>
`,
  );
  return dir;
}
