/** How `backends restore` reads a dump: split where the server would split it, and kept inside the staging database. */
import { restorableStatements, splitSqlStatements } from '../../src/backend/mysql/dump-statements.js';

describe('splitting a dump into statements', () => {
  it('splits at semicolons outside quotes, backticks and comments', () => {
    const text = [
      '-- MariaDB dump 10.19',
      '/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;',
      "CREATE TABLE `odd;name` (`stub` char(1) NOT NULL DEFAULT 'a') /* a; comment */ ENGINE=InnoDB;",
      "INSERT INTO `odd;name` VALUES ('a;b'),('it''s;'),('back\\\\slash\\';');",
      '# a comment; with a semicolon',
      'SELECT "double;quoted";',
    ].join('\n');
    expect(splitSqlStatements(text)).toEqual([
      '/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */',
      "CREATE TABLE `odd;name` (`stub` char(1) NOT NULL DEFAULT 'a') /* a; comment */ ENGINE=InnoDB",
      "INSERT INTO `odd;name` VALUES ('a;b'),('it''s;'),('back\\\\slash\\';')",
      'SELECT "double;quoted"',
    ]);
  });

  it('keeps a last statement without a semicolon, and drops empty ones', () => {
    expect(splitSqlStatements(';;\n SELECT 1;\n\nSELECT 2')).toEqual(['SELECT 1', 'SELECT 2']);
  });

  it('reads an unterminated quote or comment to the end rather than splitting inside it', () => {
    expect(splitSqlStatements("SELECT 'a;b")).toEqual(["SELECT 'a;b"]);
    expect(splitSqlStatements('SELECT 1 /* ; ')).toEqual(['SELECT 1 /* ;']);
  });
});

describe('the statements a restore loads', () => {
  it('leaves out what would reach past the staging database, and says which kinds', () => {
    const text = [
      'CREATE DATABASE /*!32312 IF NOT EXISTS*/ `ticketd` /*!40100 DEFAULT CHARACTER SET utf8mb4 */;',
      'USE `ticketd`;',
      "SET @@GLOBAL.GTID_PURGED=/*!80000 '+'*/ 'uuid:1-5';",
      'SET @@SESSION.SQL_LOG_BIN= 0;',
      'LOCK TABLES `tickets_default` WRITE;',
      "INSERT INTO `tickets_default` VALUES (17,'a');",
      'UNLOCK TABLES;',
      '/*M!100616 SET @OLD_NOTE_VERBOSITY=@@NOTE_VERBOSITY, NOTE_VERBOSITY=0 */;',
    ].join('\n');
    const { statements, leftOut } = restorableStatements(text);
    expect(statements).toEqual([
      "INSERT INTO `tickets_default` VALUES (17,'a')",
      '/*M!100616 SET @OLD_NOTE_VERBOSITY=@@NOTE_VERBOSITY, NOTE_VERBOSITY=0 */',
    ]);
    expect(leftOut.sort()).toEqual(
      ['CREATE DATABASE', 'LOCK TABLES', 'SET @@GLOBAL.GTID_PURGED', 'SET @@SESSION.SQL_LOG_BIN', 'USE'].sort(),
    );
  });
});
