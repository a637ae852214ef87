package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.ProcedureCatalog;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Spark's {@code TableCatalog} over a tsfile-catalog warehouse: every call is answered by the
 * Python delegate (the registry, the table layer and its checks); this class only translates.
 *
 * <p>Configured as {@code spark.sql.catalog.<name> = io.tsfilecatalog.spark.TsFileCatalog} with
 * {@code spark.sql.catalog.<name>.warehouse}; see docs/spark-catalog.md.
 */
public class TsFileCatalog implements StagingTableCatalog, SupportsNamespaces, ProcedureCatalog {
  private String name;
  private ObjectNode config;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    PluginClasses.load();
    this.name = name;
    this.config = Client.object();
    config.put("name", name);
    config.set("options", Client.map(options.asCaseSensitiveMap()));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String[] defaultNamespace() {
    return new String[] {"default"};
  }

  private ObjectNode request() {
    ObjectNode out = Client.object();
    out.set("catalog", config);
    return out;
  }

  private ObjectNode request(Identifier ident) {
    ObjectNode out = request();
    out.set("namespace", Client.strings(ident.namespace()));
    out.put("name", ident.name());
    return out;
  }

  private ObjectNode request(String[] namespace) {
    ObjectNode out = request();
    out.set("namespace", Client.strings(namespace));
    return out;
  }

  // -- tables ---------------------------------------------------------------------------------

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    JsonNode names = call("list_tables", request(namespace), null, namespace);
    Identifier[] out = new Identifier[names.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = Identifier.of(namespace, names.get(i).asText());
    }
    return out;
  }

  @Override
  public boolean tableExists(Identifier ident) {
    // Whether the name is registered, without loading it (the default loads): DROP TABLE
    // asks first, and a name whose registry entry cannot be read must still be droppable.
    return Client.call("table_exists", request(ident)).asBoolean();
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    return load(ident, request(ident));
  }

  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    ObjectNode request = request(ident);
    request.put("version", version);
    return load(ident, request);
  }

  @Override
  public Table loadTable(Identifier ident, long timestamp) throws NoSuchTableException {
    ObjectNode request = request(ident);
    request.put("timestamp_us", timestamp);
    return load(ident, request);
  }

  private Table load(Identifier ident, ObjectNode request) throws NoSuchTableException {
    try {
      JsonNode described = Client.callChecked("load_table", request, ident, null);
      if (described.has("metadata_table")) {
        return new TsFileMetadataTable(described.get("metadata_table"));
      }
      return new TsFileTable(config, ident, described);
    } catch (NoSuchTableException e) {
      throw e;
    } catch (TableAlreadyExistsException
        | NoSuchNamespaceException
        | NamespaceAlreadyExistsException
        | NonEmptyNamespaceException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  @Override
  public void invalidateTable(Identifier ident) {
    // Nothing is cached here: every loadTable reads the registry and the latest version.
  }

  private static StructType structOf(Column[] columns) {
    StructType schema = new StructType();
    for (Column column : columns) {
      schema = schema.add(new StructField(column.name(), column.dataType(), column.nullable(),
          org.apache.spark.sql.types.Metadata.empty()));
    }
    return schema;
  }

  private static void refusePartitions(Transform[] partitions) {
    if (partitions.length > 0) {
      throw new UnsupportedOperationException(
          "tsfile tables have no PARTITIONED BY: parts are pruned by time, TAG and field "
              + "statistics instead (see docs/spark-catalog.md)");
    }
  }

  @Override
  @SuppressWarnings("deprecation") // Spark 4.2 and 4.3 route CREATE TABLE through this one
  public Table createTable(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    return createTable(ident, structOf(columns), partitions, properties);
  }

  // -- CREATE/REPLACE TABLE ... AS SELECT, saveAsTable, writeTo(...).create() -------------------

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageCreate(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    try {
      return stage(ident, structOf(columns), partitions, properties, "create");
    } catch (NoSuchTableException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageReplace(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws NoSuchNamespaceException, NoSuchTableException {
    try {
      return stage(ident, structOf(columns), partitions, properties, "replace");
    } catch (TableAlreadyExistsException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageCreateOrReplace(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws NoSuchNamespaceException {
    try {
      return stage(ident, structOf(columns), partitions, properties, "create_or_replace");
    } catch (TableAlreadyExistsException | NoSuchTableException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  private StagedTable stage(
      Identifier ident,
      StructType schema,
      Transform[] partitions,
      Map<String, String> properties,
      String mode)
      throws TableAlreadyExistsException, NoSuchNamespaceException, NoSuchTableException {
    refusePartitions(partitions);
    ObjectNode request = request(ident);
    request.put("mode", mode);
    request.put("schema", schema.json());
    request.set("properties", Client.map(properties));
    try {
      JsonNode staged = Client.callChecked("stage", request, ident, null);
      return new TsFileStagedTable(request, schema, staged);
    } catch (NamespaceAlreadyExistsException | NonEmptyNamespaceException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  @Override
  @SuppressWarnings("deprecation")
  public Table createTable(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    refusePartitions(partitions);
    ObjectNode request = request(ident);
    request.put("schema", schema.json());
    request.set("properties", Client.map(properties));
    try {
      return new TsFileTable(
          config, ident, Client.callChecked("create_table", request, ident, null));
    } catch (NoSuchTableException | NamespaceAlreadyExistsException | NonEmptyNamespaceException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
    ObjectNode request = request(ident);
    ArrayNode list = request.putArray("changes");
    for (TableChange change : changes) {
      list.add(Changes.toJson(change));
    }
    try {
      return new TsFileTable(
          config, ident, Client.callChecked("alter_table", request, ident, null));
    } catch (NoSuchTableException e) {
      throw e;
    } catch (TableAlreadyExistsException
        | NoSuchNamespaceException
        | NamespaceAlreadyExistsException
        | NonEmptyNamespaceException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  @Override
  public boolean dropTable(Identifier ident) {
    return drop(ident, false);
  }

  @Override
  public boolean purgeTable(Identifier ident) {
    return drop(ident, true);
  }

  private boolean drop(Identifier ident, boolean purge) {
    ObjectNode request = request(ident);
    request.put("purge", purge);
    return Client.call("drop_table", request).asBoolean();
  }

  @Override
  public void renameTable(Identifier from, Identifier to)
      throws NoSuchTableException, TableAlreadyExistsException {
    ObjectNode request = request(from);
    request.set("new_namespace", Client.strings(to.namespace()));
    request.put("new_name", to.name());
    try {
      Client.callChecked("rename_table", request, from, null);
    } catch (NoSuchNamespaceException
        | NamespaceAlreadyExistsException
        | NonEmptyNamespaceException e) {
      throw new IllegalStateException(e.getMessage(), e);
    } catch (TableAlreadyExistsException e) {
      throw new TableAlreadyExistsException(to);
    }
  }

  // -- procedures -----------------------------------------------------------------------------

  @Override
  public UnboundProcedure loadProcedure(Identifier ident) {
    ObjectNode request = request(ident);
    return new TsFileProcedure(request, ident.name(), Client.call("describe_procedure", request));
  }

  @Override
  public Identifier[] listProcedures(String[] namespace) {
    JsonNode names = Client.call("list_procedures", request(namespace));
    Identifier[] out = new Identifier[names.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = Identifier.of(namespace, names.get(i).asText());
    }
    return out;
  }

  // -- namespaces -----------------------------------------------------------------------------

  @Override
  public String[][] listNamespaces() throws NoSuchNamespaceException {
    return listNamespaces(new String[0]);
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    JsonNode names = call("list_namespaces", request(namespace), null, namespace);
    String[][] out = new String[names.size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = Client.toStrings(names.get(i));
    }
    return out;
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    return Client.call("namespace_exists", request(namespace)).asBoolean();
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace)
      throws NoSuchNamespaceException {
    return Client.toMap(call("namespace_metadata", request(namespace), null, namespace));
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata)
      throws NamespaceAlreadyExistsException {
    ObjectNode request = request(namespace);
    request.set("metadata", Client.map(metadata));
    try {
      Client.callChecked("create_namespace", request, null, namespace);
    } catch (NoSuchTableException
        | TableAlreadyExistsException
        | NoSuchNamespaceException
        | NonEmptyNamespaceException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes) {
    throw new UnsupportedOperationException(
        "ALTER NAMESPACE is not supported by the tsfile catalog: namespaces hold no properties");
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade)
      throws NoSuchNamespaceException, NonEmptyNamespaceException {
    ObjectNode request = request(namespace);
    request.put("cascade", cascade);
    try {
      return Client.callChecked("drop_namespace", request, null, namespace).asBoolean();
    } catch (NoSuchTableException
        | TableAlreadyExistsException
        | NamespaceAlreadyExistsException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /** A call whose only checked failure is a missing namespace. */
  private static JsonNode call(
      String operation, ObjectNode request, Identifier ident, String[] namespace)
      throws NoSuchNamespaceException {
    try {
      return Client.callChecked(operation, request, ident, namespace);
    } catch (NoSuchNamespaceException e) {
      throw e;
    } catch (NoSuchTableException
        | TableAlreadyExistsException
        | NamespaceAlreadyExistsException
        | NonEmptyNamespaceException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }
}
