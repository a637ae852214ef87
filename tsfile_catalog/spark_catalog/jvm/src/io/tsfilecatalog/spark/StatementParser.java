package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The session extensions' parser, as Delta's {@code DeltaSqlParser}: the catalog's own
 * statements Spark cannot parse ({@code DESCRIBE HISTORY}, {@code SHOW PARTS}, {@code
 * OPTIMIZE}, ...) become {@code CALL <catalog>.system.sql(statement => '...')}, which Spark
 * parses and runs once when it executes; every other text goes to Spark's parser untouched.
 *
 * <p>The grammar lives once, in Python: this class only looks at a text's first words, and asks
 * the delegate ({@code claim_statement}) whether a text starting like one of the statements is
 * one, and which catalog runs it. Spark's own statements pay no round trip. The parser is a
 * proxy forwarding every other method to Spark's, so it holds across Spark versions whose
 * {@code ParserInterface} differ.
 */
final class StatementParser implements InvocationHandler {
  /** The first words of the catalog's statements, after any comments. */
  private static final Pattern MAYBE_OURS =
      Pattern.compile(
          "(?:\\s|--[^\\n]*(?:\\n|$)|/\\*.*?\\*/)*"
              + "(?:(?:DESC|DESCRIBE)\\s+(?:HISTORY|DETAIL)\\s"
              + "|(?:DESC|DESCRIBE)\\s+(?:TABLE\\s+)?(?:EXTENDED\\s+)?tsfile\\s*[(.]"
              + "|(?:SHOW|EXPLAIN)\\s+PARTS\\b"
              + "|OPTIMIZE\\b|VACUUM\\b|RESTORE\\b|EXPIRE\\s+SNAPSHOTS\\b"
              + "|ALTER\\s+TABLE\\b.*?\\b(?:ADD|DROP)\\s+PART\\b)",
          Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

  private static final String CATALOG_PREFIX = "spark.sql.catalog.";
  private final SparkSession session;
  private final ParserInterface spark;

  private StatementParser(SparkSession session, ParserInterface spark) {
    this.session = session;
    this.spark = spark;
  }

  /** Spark's parser {@code spark} of {@code session}, with the catalog's statements. */
  static ParserInterface wrap(SparkSession session, ParserInterface spark) {
    return (ParserInterface)
        Proxy.newProxyInstance(
            StatementParser.class.getClassLoader(),
            new Class<?>[] {ParserInterface.class},
            new StatementParser(session, spark));
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    String name = method.getName();
    if ((name.equals("parsePlan") || name.equals("parsePlanWithParameters"))
        && args != null
        && args.length > 0
        && args[0] instanceof String) {
      String call = call((String) args[0]);
      if (call != null) {
        return spark.parsePlan(call);
      }
    }
    try {
      return method.invoke(spark, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** The {@code CALL} that runs {@code sql}, or null when it is not the catalog's. */
  private String call(String sql) {
    if (!MAYBE_OURS.matcher(sql).lookingAt()) {
      return null;
    }
    ObjectNode request = Client.object();
    request.put("sql", sql);
    ArrayNode catalogs = catalogs(session);
    request.set("catalogs", catalogs);
    if (catalogs.isEmpty()) {
      return null; // no catalog of the plugin in this session: Spark's own parser decides
    }
    request.put("current", session.sessionState().catalogManager().currentCatalog().name());
    JsonNode claimed = Client.call("claim_statement", request);
    if (!claimed.path("ours").asBoolean() || isRelation(claimed.get("unless_relation"))) {
      return null;
    }
    // A refused statement (malformed, or in no catalog it can run in) is refused when the
    // CALL runs: this proxy can throw no AnalysisException (see claim_statement).
    JsonNode refusal = claimed.get("refusal");
    return "CALL "
        + quote(claimed.get("catalog").asText())
        + ".system.sql(statement => "
        + literal(claimed.get("statement").asText())
        + (refusal == null || refusal.isNull() ? "" : ", refusal => " + literal(refusal.asText()))
        + ")";
  }

  /**
   * Whether {@code name} (null: none asked) is a table or view of the session, in which case
   * Spark's reading of the text (DESCRIBE of a column of it) is the one (see claim_statement).
   */
  private boolean isRelation(JsonNode name) {
    if (name == null || name.isNull()) {
      return false;
    }
    try {
      return session.catalog().tableExists(name.asText());
    } catch (RuntimeException e) {
      return false; // no such namespace or catalog: no relation of Spark's to describe
    }
  }

  private static String literal(String text) {
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }

  /** The names of {@code session}'s catalogs of this plugin. */
  static ArrayNode catalogs(SparkSession session) {
    ArrayNode catalogs = Client.JSON.createArrayNode();
    Map<String, String> settings =
        CollectionConverters.asJava(session.sessionState().conf().getAllConfs());
    settings.forEach(
        (key, value) -> {
          if (!key.startsWith(CATALOG_PREFIX)
              || !(TsFileCatalog.class.getName().equals(value)
                  || TsFileSessionCatalog.class.getName().equals(value))) {
            return;
          }
          String catalog = key.substring(CATALOG_PREFIX.length());
          if (!catalog.isEmpty() && !catalog.contains(".")) {
            catalogs.add(catalog);
          }
        });
    return catalogs;
  }

  private static String quote(String identifier) {
    return "`" + identifier.replace("`", "``") + "`";
  }
}
