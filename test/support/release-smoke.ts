/**
 * Each artifact of the release folder (`npm run release`) installed alone in a fresh temp place,
 * offline where the language allows, and a smoke program in its language that takes IDs from a
 * running ticketd: every program prints the IDs it got, one per line. Their requests may wait 30 s:
 * a shared 2-core machine under the suite's load answers a first lease slowly, not wrongly.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAsync, type Ran } from './packed-release.js';

/** Throws with what the command said when it did not exit 0; returns its run. */
export function ok(ran: Ran, what: string): Ran {
  if (ran.status !== 0)
    throw new Error(`${what} exited with ${ran.status}:\n${(ran.stderr + ran.stdout).slice(-3000)}`);
  return ran;
}

/** The decimal IDs a smoke program printed (lines of digits only). */
export function printedIds(ran: Ran): string[] {
  return ran.stdout.split('\n').filter((line) => /^\d+$/.test(line.trim()));
}

/** The environment a smoke program runs with: PATH and HOME only, and `extra`. */
function bareEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ...extra };
}

/**
 * A stand-in for the Go client where clients/go is not on this branch yet: module
 * ticketd.dev/ticketd, standard library only, one function that takes IDs over HTTP.
 */
export function writeGoStandIn(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'go.mod'), 'module ticketd.dev/ticketd\n\ngo 1.19\n');
  writeFileSync(
    join(dir, 'standin.go'),
    `// Package ticketd is a test's stand-in for the Go client.
package ticketd

import (
\t"encoding/json"
\t"fmt"
\t"net/http"
)

// TakeIDs asks a ticketd at url for count IDs of sequence.
func TakeIDs(url, sequence string, count int) ([]string, error) {
\tres, err := http.Post(fmt.Sprintf("%s/v1/sequences/%s/ids?count=%d", url, sequence, count), "application/json", nil)
\tif err != nil {
\t\treturn nil, err
\t}
\tdefer res.Body.Close()
\tvar body struct{ IDs []string \`json:"ids"\` }
\tif res.StatusCode != 200 {
\t\treturn nil, fmt.Errorf("POST ids: %d", res.StatusCode)
\t}
\terr = json.NewDecoder(res.Body).Decode(&body)
\treturn body.IDs, err
}
`,
  );
  return dir;
}

/**
 * A Go program fetched through GOPROXY=file://<release>/go alone (GOSUMDB off, -mod=mod): it imports
 * every package of the module (so each downloads and compiles from the proxy's zip) and takes IDs.
 * With the stand-in it takes them through the module; with the real client, over HTTP beside it.
 */
export async function goSmoke(
  release: string,
  place: string,
  version: string,
  url: string,
  standIn: boolean,
): Promise<Ran> {
  const app = join(place, 'go-app');
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'go.mod'), `module smoke\n\ngo 1.19\n\nrequire ticketd.dev/ticketd v${version}\n`);
  // The real module: three IDs through its own Client; the stand-in (no clients/go): its TakeIDs.
  const take = standIn
    ? `\tids, err := ticketd.TakeIDs(os.Args[1], "default", 3)
\tif err != nil {
\t\tfail(err)
\t}
\tfor _, id := range ids {
\t\tfmt.Println(id)
\t}`
    : `\tc, err := ticketd.NewClient(ticketd.Options{URLs: []string{os.Args[1]}, Sequence: "default"})
\tif err != nil {
\t\tfail(err)
\t}
\tdefer c.Close()
\tctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
\tdefer cancel()
\tfor i := 0; i < 3; i++ {
\t\tid, err := c.Next(ctx)
\t\tif err != nil {
\t\t\tfail(err)
\t\t}
\t\tfmt.Println(id)
\t}`;
  writeFileSync(
    join(app, 'main.go'),
    `package main

import (
${standIn ? '' : '\t"context"\n'}\t"fmt"
\t"os"
${standIn ? '' : '\t"time"\n'}
\t"ticketd.dev/ticketd"
)

func fail(err error) {
\tfmt.Fprintln(os.Stderr, err)
\tos.Exit(1)
}

func main() {
${take}
}
`,
  );
  const env = bareEnv(place, {
    GOPROXY: `file://${join(release, 'go')}`,
    GOFLAGS: '-mod=mod',
    GOSUMDB: 'off',
    GOPATH: join(place, 'gopath'),
    GOCACHE: join(place, 'gocache'),
  });
  return ok(await runAsync('go', ['run', '.', url], app, env, 300_000), 'go run of the smoke program');
}

/** A venv with the client installed from the release folder's `python/` alone (`pip --no-index`); `dist` picks the wheel or the sdist. */
export async function pythonSmoke(
  release: string,
  place: string,
  python: string,
  dist: 'wheel' | 'sdist',
  url: string,
): Promise<Ran> {
  const venv = join(place, `venv-${dist}`);
  ok(await runAsync(python, ['-m', 'venv', venv], place), 'python3 -m venv');
  const pip = [
    '-m',
    'pip',
    'install',
    '--no-index',
    '--find-links',
    join(release, 'python'),
    dist === 'wheel' ? '--only-binary=:all:' : '--no-binary=:all:',
    'ticketd-client',
  ];
  ok(await runAsync(join(venv, 'bin', 'python'), pip, place, bareEnv(place)), `pip install of the ${dist}`);
  const program = [
    'import sys',
    'from ticketd_client import TicketClient',
    'with TicketClient([sys.argv[1]], "default", timeout=30.0) as ids:',
    '    for i in ids.next_batch(3):',
    '        print(i)',
  ].join('\n');
  return ok(
    await runAsync(join(venv, 'bin', 'python'), ['-c', program, url], place, bareEnv(place)),
    `the Python smoke program (${dist})`,
  );
}

/** Why Maven cannot build offline here (Debian's maven and plugin packages), or undefined. */
export function mavenMissing(): string | undefined {
  const needs = [
    'maven-compiler-plugin',
    'maven-resources-plugin',
    'maven-jar-plugin',
    'maven-surefire-plugin',
    'maven-install-plugin',
  ];
  const lacking = needs.filter((p) => !existsSync(`/usr/share/maven-repo/org/apache/maven/plugins/${p}`));
  if (!existsSync('/usr/bin/mvn')) return 'no mvn (apt-get install maven)';
  if (lacking.length > 0)
    return `Debian's maven repository lacks ${lacking.join(', ')} (apt-get install libmaven-compiler-plugin-java libmaven-resources-plugin-java libmaven-jar-plugin-java libsurefire-java libmaven-install-plugin-java)`;
  return undefined;
}

/** The Maven command line that builds offline with Debian's plugins and a local repository of its own. */
export function offlineMaven(settings: string, localRepo: string): string[] {
  return ['-B', '-q', '-o', '-Daether.offline.protocols=file', '-s', settings, `-Dmaven.repo.local=${localRepo}`];
}

/**
 * A Maven project depending on dev.ticketd:ticketd-client from the release's `maven/` folder as a
 * file repository, built offline (`mvn -o`), then run on the jar Maven resolved.
 */
export async function javaSmoke(
  release: string,
  place: string,
  settings: string,
  version: string,
  url: string,
): Promise<Ran> {
  const app = join(place, 'java-app');
  const repo = join(place, 'm2');
  mkdirSync(join(app, 'src', 'main', 'java', 'smoke'), { recursive: true });
  writeFileSync(
    join(app, 'pom.xml'),
    `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>smoke</groupId><artifactId>smoke</artifactId><version>1</version>
  <properties><maven.compiler.release>17</maven.compiler.release><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <repositories><repository><id>ticketd-release</id><url>file://${join(release, 'maven')}</url></repository></repositories>
  <dependencies><dependency><groupId>dev.ticketd</groupId><artifactId>ticketd-client</artifactId><version>${version}</version></dependency></dependencies>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-jar-plugin</artifactId><version>3.3.0</version></plugin>
  </plugins></build>
</project>
`,
  );
  writeFileSync(
    join(app, 'src', 'main', 'java', 'smoke', 'Smoke.java'),
    `package smoke;

import dev.ticketd.client.TicketClient;
import java.time.Duration;

public final class Smoke {
  public static void main(String[] args) throws Exception {
    try (TicketClient ids = TicketClient.builder().urls(args[0]).sequence("default").timeout(Duration.ofSeconds(30)).build()) {
      for (long id : ids.nextBatch(3)) System.out.println(id);
    }
  }
}
`,
  );
  ok(
    await runAsync('mvn', [...offlineMaven(settings, repo), 'package'], app, bareEnv(place), 300_000),
    'mvn -o package of the smoke project',
  );
  const jar = join(repo, 'dev', 'ticketd', 'ticketd-client', version, `ticketd-client-${version}.jar`);
  if (!existsSync(jar)) throw new Error(`Maven did not resolve ${jar} from the release folder`);
  return ok(
    await runAsync(
      'java',
      ['-cp', `${join(app, 'target', 'classes')}:${jar}`, 'smoke.Smoke', url],
      app,
      bareEnv(place),
    ),
    'the Java smoke program',
  );
}

/** The client tarball installed alone (`npm install --offline`) and a Node program taking IDs with it. */
export async function nodeSmoke(release: string, place: string, clientTarball: string, url: string): Promise<Ran> {
  const app = join(place, 'node-app');
  mkdirSync(app, { recursive: true });
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'smoke', version: '1.0.0', private: true, type: 'module' }),
  );
  ok(
    await runAsync(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', join(release, 'npm', clientTarball)],
      app,
    ),
    'npm install of the client tarball',
  );
  const program = [
    "import { createTicketClient } from 'ticketd-client';",
    "const ids = createTicketClient({ urls: [process.argv[1]], sequence: 'default', timeoutMs: 30_000 });",
    'for (const id of await ids.nextBatch(3)) console.log(String(id));',
    'await ids.close();',
  ].join('\n');
  return ok(
    await runAsync(process.execPath, ['--input-type=module', '-e', program, url], app, bareEnv(place)),
    'the Node smoke program',
  );
}
